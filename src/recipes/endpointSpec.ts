// A browser endpoint of a grid as the user gives it: `--ws-endpoint URL`, with after `#` tabward's own settings for
// it, `&`-separated: `concurrency=N` (its share of runs) and `header=Name:Value` (repeatable, percent-encoded: a
// bearer token a service wants on connect). A fragment is never part of a WebSocket or WebDriver URL (clients
// refuse one), so it is free to carry them and is dropped before connecting. The scheme says what speaks there:
// - `ws://`, `wss://`, `http://`, `https://`: CDP (Chromium's `/json/version`, Browserless, a load balancer);
// - `selenium+http://`, `selenium+https://`: a Selenium Grid 4 (its router or a standalone): each run creates a
//   WebDriver session, drives it over the session's `se:cdp` endpoint and deletes it (seleniumGrid.ts);
// - `playwright+ws://`, `playwright+wss://`: Playwright's `launchServer` / `run-server`, spoken with `connect`.
// Endpoint URLs often carry credentials (Browserless `?token=`, an API key, `user:password@`, a header): everything
// tabward shows about an endpoint — /health, logs, errors, results — uses its label, with every query value and
// the user info replaced by *** and no header value at all.

import { TabwardError } from '../core/errors.ts';

export type EndpointKind = 'cdp' | 'selenium' | 'playwright';

export interface EndpointSpec {
  /** What speaks at the endpoint. */
  readonly kind: EndpointKind;
  /** What to connect to, without tabward's `selenium+`/`playwright+` prefix and fragment: it may hold a credential, never shown. */
  readonly url: string;
  /** The URL as given (prefix included) with its credentials replaced by ***: what /health, logs and errors show. */
  readonly label: string;
  /** Runs this endpoint takes at the same time (from this serve process). */
  readonly concurrency: number;
  /** Headers sent when connecting (and on every WebDriver request): their values are never shown. */
  readonly headers: Readonly<Record<string, string>>;
}

const schemes: Record<string, EndpointKind> = {
  'ws:': 'cdp',
  'wss:': 'cdp',
  'http:': 'cdp',
  'https:': 'cdp',
  'selenium+http:': 'selenium',
  'selenium+https:': 'selenium',
  'playwright+ws:': 'playwright',
  'playwright+wss:': 'playwright',
};

export function parseEndpoint(given: string, defaultConcurrency: number): EndpointSpec {
  const hash = given.indexOf('#');
  const base = hash < 0 ? given : given.slice(0, hash);
  let parsed: URL;
  try {
    parsed = new URL(base);
  } catch {
    throw new TabwardError(
      'bad_input',
      'A --ws-endpoint is not a URL (it is not shown here: it may hold a token).',
      'Give a CDP WebSocket URL such as ws://127.0.0.1:9222/devtools/browser/… or ws://localhost:3000?token=…, a Selenium Grid as selenium+http://grid:4444, or a Playwright server as playwright+ws://host:port/….',
    );
  }
  const label = redactEndpoint(base);
  const kind = schemes[parsed.protocol];
  if (!kind)
    throw new TabwardError(
      'bad_input',
      `--ws-endpoint ${label}: ${parsed.protocol} is not a browser endpoint's scheme.`,
      'Use ws://, wss://, http:// or https:// (CDP), selenium+http:// or selenium+https:// (Selenium Grid 4), playwright+ws:// or playwright+wss:// (a Playwright server).',
    );
  const settings = hash < 0 ? { headers: {} } : settingsOf(given.slice(hash + 1), label);
  return {
    kind,
    url: kind === 'cdp' ? base : base.slice(base.indexOf('+') + 1),
    label,
    concurrency: settings.concurrency ?? defaultConcurrency,
    headers: settings.headers,
  };
}

function settingsOf(
  fragment: string,
  label: string,
): { concurrency?: number; headers: Record<string, string> } {
  const headers: Record<string, string> = {};
  let concurrency: number | undefined;
  for (const part of fragment.split('&')) {
    const equals = part.indexOf('=');
    const name = equals < 0 ? part : part.slice(0, equals);
    const value = equals < 0 ? '' : part.slice(equals + 1);
    if (name === 'concurrency') {
      const parsed = /^\d+$/.test(value) ? Number.parseInt(value, 10) : Number.NaN;
      if (!Number.isInteger(parsed) || parsed < 1)
        throw badFragment(label, `concurrency=${value}: a whole number, 1 or more, is needed`);
      concurrency = parsed;
    } else if (name === 'header') {
      const [header, headerValue] = headerOf(value);
      if (!header || headerValue === undefined)
        // The value may be the credential itself: not shown.
        throw badFragment(label, 'a header=… is not Name:Value (percent-encoded)');
      headers[header] = headerValue;
    } else throw badFragment(label, `${name} is not a setting tabward knows`);
  }
  return { ...(concurrency === undefined ? {} : { concurrency }), headers };
}

function headerOf(encoded: string): [string | undefined, string | undefined] {
  let decoded: string;
  try {
    decoded = decodeURIComponent(encoded);
  } catch {
    return [undefined, undefined];
  }
  const colon = decoded.indexOf(':');
  if (colon < 1) return [undefined, undefined];
  const name = decoded.slice(0, colon).trim();
  const value = decoded.slice(colon + 1).trim();
  // A header name is a token; a value holds no line break (it would end the header).
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || /[\r\n\0]/.test(value)) return [undefined, undefined];
  return [name, value];
}

function badFragment(label: string, why: string): TabwardError {
  return new TabwardError(
    'bad_input',
    `--ws-endpoint ${label}#…: after # tabward reads concurrency=N and header=Name:Value, joined by & (${why}).`,
    'Example: --ws-endpoint "wss://browsers.example#concurrency=4&header=Authorization:Bearer%20TOKEN".',
  );
}

/** The URL with its user info and every query value replaced by ***; not a URL at all: shown as ***. */
export function redactEndpoint(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '***';
  }
  if (parsed.username) parsed.username = '***';
  if (parsed.password) parsed.password = '***';
  for (const key of new Set(parsed.searchParams.keys())) parsed.searchParams.set(key, '***');
  return parsed.toString().replaceAll('%2A', '*');
}

/**
 * A text about an endpoint (a connection error names the URL it tried) with the endpoint's credentials taken out:
 * the whole URL becomes its label, and any credential still standing alone (encoded or not) becomes ***.
 */
export function scrubEndpoint(
  text: string,
  endpoint: Pick<EndpointSpec, 'url' | 'label'> & { readonly headers?: Readonly<Record<string, string>> },
): string {
  let scrubbed = text.replaceAll(endpoint.url, endpoint.label);
  for (const secret of credentialsOf(endpoint.url, endpoint.headers ?? {}))
    for (const form of new Set([secret, encodeURIComponent(secret)]))
      scrubbed = scrubbed.replaceAll(form, '***');
  return scrubbed;
}

function credentialsOf(url: string, headers: Readonly<Record<string, string>>): string[] {
  // A header's value is shown nowhere, and neither is its last word alone (the token of "Bearer TOKEN").
  const headerValues = Object.values(headers).flatMap((value) => [value, value.split(/\s+/).at(-1) ?? '']);
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  const values = [
    ...(parsed
      ? [
          decodeURIComponent(parsed.username),
          decodeURIComponent(parsed.password),
          ...parsed.searchParams.values(),
        ]
      : []),
    ...headerValues,
  ];
  // A one- or two-character value ("1", "on") would blank out unrelated text; credentials are longer.
  return values.filter((value) => value.length >= 3).sort((a, b) => b.length - a.length);
}
