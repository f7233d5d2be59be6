// Requests Chromium makes of its own accord, named for the audit. What could be switched off is
// (browserConnections.ts withOwnBrowserFeatures); these cannot be, and reach the egress proxy untied, where a
// sensitive rule or the session's taint refuses them. A reader of the log who sees tabward stop a POST to
// accounts.google.com at every start should learn that the browser sends it, not a page or the agent.
// Named by address alone: a page's request to the same address is worded the same, and the verdict never changes.

interface OwnRequest {
  readonly matches: (url: URL) => boolean;
  readonly what: string;
}

const ownRequests: readonly OwnRequest[] = [
  {
    matches: (url) => url.hostname === 'accounts.google.com' && url.pathname === '/ListAccounts',
    what: "the address of Chromium's own Google sign-in check, which the browser sends as it starts (no switch turns it off)",
  },
  {
    matches: (url) => url.hostname === 'update.googleapis.com' && url.pathname.startsWith('/service/update2'),
    what: "the address of Chromium's own component update check",
  },
];

/** What of Chromium's own a request's address is, or undefined. */
export function browserOwnRequest(address: string): string | undefined {
  if (!URL.canParse(address)) return undefined;
  const url = new URL(address);
  return ownRequests.find((own) => own.matches(url))?.what;
}
