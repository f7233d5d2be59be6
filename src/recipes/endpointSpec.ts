// A browser endpoint of a grid as the user gives it: `--ws-endpoint URL`, or `URL#concurrency=N` for its own share
// of runs. A fragment is never part of a CDP WebSocket URL (WebSocket clients refuse one), so it is free to carry
// tabward's setting and is dropped before connecting. Endpoint URLs often carry credentials (Browserless
// `?token=`, an API key, `user:password@`): everything tabward shows about an endpoint — /health, logs, errors,
// results — uses its label, with every query value and the user info replaced by ***.

import { TabwardError } from '../core/errors.ts';

export interface EndpointSpec {
  /** What to connect to, as given without the fragment: it may hold a credential, never shown. */
  readonly url: string;
  /** The URL with its credentials replaced by ***: what /health, logs and errors show. */
  readonly label: string;
  /** Runs this endpoint takes at the same time (from this serve process). */
  readonly concurrency: number;
}

const schemes = new Set(['ws:', 'wss:', 'http:', 'https:']);

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
      'Give a CDP WebSocket URL such as ws://127.0.0.1:9222/devtools/browser/… or ws://localhost:3000?token=….',
    );
  }
  const label = redactEndpoint(base);
  if (!schemes.has(parsed.protocol))
    throw new TabwardError(
      'bad_input',
      `--ws-endpoint ${label}: ${parsed.protocol} is not a browser endpoint's scheme.`,
      'Use ws://, wss://, http:// or https://.',
    );
  return {
    url: base,
    label,
    concurrency: hash < 0 ? defaultConcurrency : concurrencyOf(given.slice(hash + 1), label),
  };
}

function concurrencyOf(fragment: string, label: string): number {
  const value = /^concurrency=(\d+)$/.exec(fragment)?.[1];
  const parsed = value === undefined ? Number.NaN : Number.parseInt(value, 10);
  if (!Number.isInteger(parsed) || parsed < 1)
    throw new TabwardError(
      'bad_input',
      `--ws-endpoint ${label}#${fragment}: after # only concurrency=N (a whole number, 1 or more) is understood.`,
      'Example: --ws-endpoint "ws://localhost:3000?token=…#concurrency=4".',
    );
  return parsed;
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
export function scrubEndpoint(text: string, endpoint: Pick<EndpointSpec, 'url' | 'label'>): string {
  let scrubbed = text.replaceAll(endpoint.url, endpoint.label);
  for (const secret of credentialsOf(endpoint.url))
    for (const form of new Set([secret, encodeURIComponent(secret)]))
      scrubbed = scrubbed.replaceAll(form, '***');
  return scrubbed;
}

function credentialsOf(url: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [];
  }
  const values = [
    decodeURIComponent(parsed.username),
    decodeURIComponent(parsed.password),
    ...parsed.searchParams.values(),
  ];
  // A one- or two-character value ("1", "on") would blank out unrelated text; credentials are longer.
  return values.filter((value) => value.length >= 3).sort((a, b) => b.length - a.length);
}
