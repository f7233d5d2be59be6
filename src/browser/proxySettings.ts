// How the browsers tabward starts reach hosts through its egress proxy (browser/egressProxy.ts): the host mapping
// of their --host-resolver-rules (the proxy resolves names, not the browser), whether upstream certificates are
// checked, and whether the user set a proxy of their own for the browser.

/** Where a host name is reached: as Chromium's --host-resolver-rules would send it (tests map every name). */
export type HostMapper = (host: string) => string;

/**
 * Host mapping as given by --host-resolver-rules among the browser's switches: `MAP pattern target` rules (a `*`
 * matches any run of characters), first match wins; anything else is resolved normally.
 */
export function hostMapperFrom(args: readonly string[]): HostMapper {
  const rules = args
    .filter((arg) => arg.startsWith('--host-resolver-rules='))
    .flatMap((arg) => arg.slice('--host-resolver-rules='.length).split(','))
    .map((rule) => rule.trim().split(/\s+/))
    .filter((parts) => parts[0]?.toUpperCase() === 'MAP' && parts.length === 3)
    .map(([, pattern = '', target = '']) => ({
      test: new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`, 'i'),
      target: target.replace(/:\d+$/, ''),
    }));
  return (host) => rules.find((rule) => rule.test.test(host))?.target ?? host;
}

/**
 * The proxy the user set for the browser, if any (a --proxy-* switch, or the proxy variables Chromium reads on
 * Linux): tabward's egress proxy would replace it; the browser is not started then (browser/session.ts).
 */
export function configuredProxy(args: readonly string[], env: NodeJS.ProcessEnv): string | undefined {
  const flag = args.find((arg) =>
    /^--(proxy-server|proxy-pac-url|proxy-auto-detect|no-proxy-server)\b/.test(arg),
  );
  if (flag) return flag.split('=')[0];
  const variable = ['https_proxy', 'http_proxy', 'all_proxy', 'HTTPS_PROXY', 'HTTP_PROXY', 'ALL_PROXY'].find(
    (name) => (env[name] ?? '').trim() !== '',
  );
  return variable ? `$${variable}` : undefined;
}

/** The browser was told to accept any certificate (tests' self-signed fixtures): the proxy does the same upstream. */
export function verifiesCertificates(args: readonly string[]): boolean {
  return !args.includes('--ignore-certificate-errors');
}
