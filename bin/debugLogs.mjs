// Loaded before Playwright by every tabward entry: Playwright's own debug logs are never let on. With DEBUG=pw:api,
// pw:channel, pw:protocol or pw:server (or a wildcard taking them in) it would print every call and CDP message on
// stderr (or into DEBUG_FILE): the passwords and secrets tabward types and the text of sensitive pages among them,
// which tabward keeps out of its own audit and results (docs/security.md). The launch logs (pw:browser) stay.
const carriesContent = [
  'pw:api',
  'pw:channel*',
  'pw:protocol',
  'pw:server*',
  'pw:recorder',
  'pw:client-certificates',
];
const asked = process.env.DEBUG;
if (asked?.trim()) {
  process.env.DEBUG = [asked, ...carriesContent.map((name) => `-${name}`)].join(',');
  if (/(^|[\s,])(\*|pw:\*|pw:(api|channel|protocol|server|recorder|client))/.test(asked))
    process.stderr.write(
      "tabward: DEBUG: Playwright's api, channel, protocol and server logs stay off: they carry what is typed " +
        'and what pages show. pw:browser is on if asked; TABWARD_DEBUG=1 shows what tabward itself swallows.\n',
    );
}
