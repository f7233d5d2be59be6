// URL patterns for sensitive-page rules, matched on the parsed parts of a URL, never on its raw string.
// Syntax: SCHEME://HOST[:PORT]/PATH[?QUERY]. SCHEME is a name or `*` (http and https). HOST is `*`, a name,
// `*.name` (the name and every subdomain) or `name.*` (that label followed by any suffix, e.g. `*.bank.*`);
// a `?` in a host label is one character. PATH[?QUERY] is a glob where `*` matches anything and `?` one
// character (as in the glob-on-string rules users bring along); a rule with a `?` is also tried on
// PATH?QUERY, so `/page?tab=billing*` names a query. A trailing `/*` also covers the bare path.
// Lives in protocol so the extension judges URLs with the very matcher the relay uses; core/urlPattern.ts
// re-exports it with tabward's typed errors.

/** A pattern that does not parse; core turns it into TabwardError('bad_input'). */
export class UrlPatternError extends Error {
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
    this.name = 'UrlPatternError';
  }
}

export interface UrlPattern {
  readonly source: string;
  readonly schemes: readonly string[] | 'web';
  readonly host: HostMatcher;
  readonly port: string | undefined;
  readonly path: RegExp;
  /** The rule has a `?`: it is tried on PATH?QUERY too. */
  readonly withQuery: boolean;
  /**
   * A rule tabward's URL syntax cannot take (no scheme, a `*` inside a host), kept as PaiCLI reads it: a glob over
   * the whole normalised URL, `*` any run, `?` one character, case-insensitive.
   */
  readonly wholeUrl?: RegExp;
}

type HostMatcher =
  | {
      readonly kind: 'any' | 'exact' | 'subdomains' | 'labelAnySuffix';
      readonly name: string;
      readonly subdomainsToo: boolean;
    }
  | { readonly kind: 'glob'; readonly regex: RegExp };

const webSchemes = ['http', 'https'];

export function compilePattern(source: string): UrlPattern {
  const text = source.trim();
  const schemeEnd = text.indexOf('://');
  if (schemeEnd <= 0) throw badPattern(source, 'it needs a scheme such as `*://` or `https://`');
  const scheme = text.slice(0, schemeEnd).toLowerCase();
  const rest = text.slice(schemeEnd + 3);
  // The host ends at the first `/`: a `?` before it is a wildcard in the host, not the start of a query.
  const slash = rest.indexOf('/');
  const authority = slash === -1 ? rest : rest.slice(0, slash);
  const pathText = slash === -1 ? '/*' : rest.slice(slash);
  const [hostText, port] = splitPort(authority, source);
  return {
    source: text,
    schemes: scheme === '*' ? 'web' : [scheme],
    host: compileHost(hostText, source),
    port,
    path: compilePath(pathText),
    withQuery: pathText.includes('?'),
  };
}

/**
 * A line of a glob-on-string rules file (PaiCLI's sensitive_patterns.txt) that is not a URL pattern tabward parses:
 * matched as a glob over the whole URL. Refused only when it is empty or holds whitespace (no URL does).
 */
export function compileWholeUrlGlob(source: string): UrlPattern {
  const text = source.trim();
  if (!text || /\s/.test(text)) throw badPattern(source, 'a rule is one glob without spaces');
  return {
    source: text,
    schemes: 'web',
    host: { kind: 'any', name: '', subdomainsToo: true },
    port: undefined,
    path: /^$/,
    withQuery: false,
    wholeUrl: new RegExp(`^${globToRegex(text.toLowerCase())}$`),
  };
}

function splitPort(authority: string, source: string): [string, string | undefined] {
  const colon = authority.lastIndexOf(':');
  if (colon === -1 || authority.endsWith(']')) return [authority, undefined];
  const port = authority.slice(colon + 1);
  if (!/^\d+$|^\*$/.test(port)) throw badPattern(source, `the port "${port}" is not a number`);
  return [authority.slice(0, colon), port === '*' ? undefined : port];
}

function compileHost(hostText: string, source: string): HostMatcher {
  const host = hostText.toLowerCase();
  if (host === '*' || host === '') return { kind: 'any', name: '', subdomainsToo: true };
  const leadingWild = host.startsWith('*.');
  const trailingWild = host.endsWith('.*');
  const core = host.slice(leadingWild ? 2 : 0, trailingWild ? -2 : undefined);
  if (core.includes('*'))
    throw badPattern(source, 'a `*` in a host may stand only for whole leading or trailing labels');
  if (core.includes('?')) return compileHostGlob(core, leadingWild, trailingWild, source);
  const name = toAsciiHost(core, source);
  if (trailingWild) return { kind: 'labelAnySuffix', name, subdomainsToo: leadingWild };
  return { kind: leadingWild ? 'subdomains' : 'exact', name, subdomainsToo: leadingWild };
}

/** A host with `?` (one character within a label): ASCII names only, matched as a regular expression. */
function compileHostGlob(
  core: string,
  leadingWild: boolean,
  trailingWild: boolean,
  source: string,
): HostMatcher {
  if (!/^[a-z0-9?_-]+(?:\.[a-z0-9?_-]+)*$/.test(core))
    throw badPattern(source, `"${core}" is not a valid host name (a \`?\` works in ASCII names only)`);
  const body = core.replace(/\./g, '\\.').replace(/\?/g, '[^.]');
  const before = leadingWild ? '(?:.+\\.)?' : '';
  const after = trailingWild ? '\\..+' : '';
  return { kind: 'glob', regex: new RegExp(`^${before}${body}${after}$`) };
}

function toAsciiHost(host: string, source: string): string {
  // The URL parser would quietly cut the host at these and match something else than the user wrote.
  if (/[#@\\\s%]/.test(host)) throw badPattern(source, `"${host}" is not a valid host name`);
  try {
    return stripTrailingDot(new URL(`http://${host}/`).hostname);
  } catch {
    throw badPattern(source, `"${host}" is not a valid host name`);
  }
}

function compilePath(pathText: string): RegExp {
  const lowered = pathText.toLowerCase();
  if (lowered.endsWith('/*')) return new RegExp(`^${globToRegex(lowered.slice(0, -2))}(?:/.*)?$`);
  return new RegExp(`^${globToRegex(lowered)}/?$`);
}

function globToRegex(glob: string): string {
  return glob
    .split('*')
    .map((part) =>
      part
        .split('?')
        .map((piece) => piece.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('.'),
    )
    .join('.*');
}

function badPattern(source: string, why: string): UrlPatternError {
  return new UrlPatternError(`Bad URL pattern "${source}": ${why}.`, 'Example: *://*.example.com/admin/*');
}

/** `github.com.` and `github.com..` are github.com. */
export function stripTrailingDot(host: string): string {
  return host.replace(/\.+$/, '');
}

/** The parts of a URL that patterns look at, worked out once per URL rather than once per rule. */
export interface UrlParts {
  readonly scheme: string;
  readonly host: string;
  readonly port: string;
  readonly query: string;
  readonly paths: readonly string[];
}

export function urlParts(url: URL): UrlParts {
  return {
    scheme: url.protocol.slice(0, -1),
    host: stripTrailingDot(url.hostname),
    port: effectivePort(url),
    query: safeDecode(url.search.slice(1)).toLowerCase(),
    paths: pathVariants(url.pathname),
  };
}

/** True when the pattern's scheme, host and port take in the URL's origin: some path of it may match. */
export function matchesOrigin(pattern: UrlPattern, url: URL | UrlParts): boolean {
  const parts = url instanceof URL ? urlParts(url) : url;
  const schemeOk =
    pattern.schemes === 'web' ? webSchemes.includes(parts.scheme) : pattern.schemes.includes(parts.scheme);
  if (!schemeOk) return false;
  if (!hostMatches(pattern.host, parts.host)) return false;
  return pattern.port === undefined || parts.port === pattern.port;
}

/** The URL as a glob-on-string rule reads it: each path form, the port only when it is not the scheme's own. */
function urlStrings(parts: UrlParts): string[] {
  const defaultPort =
    (parts.scheme === 'https' && parts.port === '443') || (parts.scheme === 'http' && parts.port === '80');
  const origin = `${parts.scheme}://${parts.host}${defaultPort || !parts.port ? '' : `:${parts.port}`}`;
  return parts.paths.map((path) => `${origin}${path}${parts.query ? `?${parts.query}` : ''}`);
}

/** True when the URL matches the pattern. `url` must already be the effective URL (see effectiveUrl). */
export function matchesPattern(pattern: UrlPattern, url: URL | UrlParts): boolean {
  const parts = url instanceof URL ? urlParts(url) : url;
  if (!matchesOrigin(pattern, parts)) return false;
  const { wholeUrl } = pattern;
  if (wholeUrl) return urlStrings(parts).some((text) => wholeUrl.test(text));
  if (parts.paths.some((path) => pattern.path.test(path))) return true;
  // A path glob is tried on PATH?QUERY as well, with or without a `?` of its own: `/*token=*` names a query
  // parameter, as it would in a glob over the whole URL (matching more is the safe side).
  return (
    (pattern.withQuery || parts.query !== '') &&
    parts.paths.some((path) => pattern.path.test(`${path}?${parts.query}`))
  );
}

function hostMatches(matcher: HostMatcher, host: string): boolean {
  switch (matcher.kind) {
    case 'any':
      return true;
    case 'exact':
      return host === matcher.name;
    case 'subdomains':
      return host === matcher.name || host.endsWith(`.${matcher.name}`);
    case 'labelAnySuffix': {
      const at = matcher.subdomainsToo ? host.indexOf(`.${matcher.name}.`) + 1 : 0;
      const startsHere = host.startsWith(`${matcher.name}.`);
      return startsHere || (matcher.subdomainsToo && at > 0);
    }
    case 'glob':
      return matcher.regex.test(host);
  }
}

function effectivePort(url: URL): string {
  if (url.port) return url.port;
  return url.protocol === 'https:' ? '443' : url.protocol === 'http:' ? '80' : '';
}

/**
 * The forms of a path that a rule is tested against: as parsed (dot-segments already resolved by the URL
 * parser), fully percent-decoded then resolved again, so `%2F` or `%73ettings` cannot hide a segment, and
 * each of those as a lenient server reads it (see normalizedPath).
 */
function pathVariants(pathname: string): string[] {
  const parsed = pathname.toLowerCase();
  const decoded = safeDecode(pathname);
  let resolved = decoded;
  try {
    resolved = new URL(decoded.replace(/^\/*/, '/'), 'http://x').pathname;
  } catch {
    // keep the decoded form
  }
  const forms = [parsed, decoded.toLowerCase(), safeDecode(resolved).toLowerCase()];
  return [...new Set([...forms, ...forms.map(normalizedPath)])];
}

/**
 * A path as servers that forgive read it: `;params` dropped from each segment (`/settings;x=1/tokens`,
 * Tomcat's `..;`), `\` as `/`, empty segments collapsed (`//settings`), dot-segments resolved, and
 * surrounding white space, control characters and trailing dots trimmed (`/settings./`, `/settings%20/`).
 */
function normalizedPath(path: string): string {
  const kept: string[] = [];
  for (const raw of path.replace(/\\/g, '/').split('/')) {
    const segment = raw.replace(/;.*$/s, '').replace(/^[\s\p{Cc}]+|[\s\p{Cc}]+$/gu, '');
    if (segment === '..') kept.pop();
    else if (segment !== '.') {
      const trimmed = segment.replace(/[.\s\p{Cc}]+$/u, '');
      if (trimmed) kept.push(trimmed);
    }
  }
  return `/${kept.join('/')}`;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text.replace(/%([0-9a-f]{2})/gi, (whole, hex: string) => {
      const char = String.fromCharCode(Number.parseInt(hex, 16));
      return /[\w.~/-]/.test(char) ? char : whole;
    });
  }
}
