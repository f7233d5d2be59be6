// A Selenium Grid 4 as a browser endpoint (`--ws-endpoint selenium+http://grid:4444`): each run creates a WebDriver
// session (POST /session, Chromium with `goog:chromeOptions`), drives it over CDP at the session's `se:cdp`
// endpoint (the Grid proxies it to the browser: the browser target too, so the browser-wide gate holds there), and
// deletes the session when the run ends, however it ends. A Grid queues new-session requests itself (its session
// queue): a request waits there as long as the run may (its deadline aborts it), and a Grid that answers "timed out
// in the queue" is busy, not down. Plain WebDriver over fetch: no Selenium client library.

import { TabwardError } from '../core/errors.ts';
import type { EndpointSpec } from './endpointSpec.ts';

export interface GridSession {
  readonly id: string;
  /** The session's CDP WebSocket URL, as the Grid gives it. */
  readonly cdp: string;
}

/** The Grid's new-session queue is full or its wait ran out: a Grid with every slot taken, tried again. */
export class GridBusy extends Error {}

/** A WebDriver session with a Chromium in it; waits in the Grid's queue until `signal` (the run's end) aborts. */
export async function createGridSession(
  endpoint: EndpointSpec,
  chromeArgs: readonly string[],
  signal: AbortSignal,
): Promise<GridSession> {
  const capabilities = {
    alwaysMatch: {
      browserName: 'chrome',
      'goog:chromeOptions': { args: ['--headless=new', ...chromeArgs] },
    },
  };
  let response: Response;
  try {
    response = await fetch(gridUrl(endpoint, 'session'), {
      method: 'POST',
      // Grid 4 wants the charset named.
      headers: { ...gridHeaders(endpoint), 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ capabilities }),
      signal,
    });
  } catch (error) {
    if (signal.aborted) throw new TabwardError('timeout', 'The run ended while its Grid session was queued.');
    throw new TabwardError(
      'attach_failed',
      `The Selenium Grid at ${endpoint.url} did not answer (${causeOf(error)}).`,
    );
  }
  const body = (await response.json().catch(() => undefined)) as
    | { value?: { sessionId?: unknown; capabilities?: Record<string, unknown>; message?: unknown } }
    | undefined;
  const value = body?.value;
  if (!response.ok || typeof value?.sessionId !== 'string') {
    const message = typeof value?.message === 'string' ? (value.message.split('\n')[0] ?? '') : '';
    const said = `${response.status}${message ? `: ${message}` : ''}`;
    // Grid 4's words when a request waited out its --session-request-timeout, or its queue is full.
    if (response.status === 429 || /timed out|queue is full|retry/i.test(message))
      throw new GridBusy(`The Selenium Grid at ${endpoint.url} has no free slot (${said})`);
    throw new TabwardError(
      'attach_failed',
      `The Selenium Grid at ${endpoint.url} did not create a session (${said}).`,
      'The Grid needs a node with Chrome or Chromium and its chromedriver.',
    );
  }
  const cdp = value.capabilities?.['se:cdp'];
  const session = { id: value.sessionId, cdp: typeof cdp === 'string' ? cdp : '' };
  if (!session.cdp) {
    await deleteGridSession(endpoint, session.id);
    throw new TabwardError(
      'attach_failed',
      `The Selenium Grid at ${endpoint.url} gave a session with no se:cdp endpoint, so tabward cannot drive it.`,
      'Use a Chromium node on Selenium Grid 4 (its CDP endpoint is on by default).',
    );
  }
  return session;
}

/** Ends the session (its browser closes on the node); bounded, and quiet: the run's result is already made. */
export async function deleteGridSession(endpoint: EndpointSpec, id: string): Promise<boolean> {
  try {
    const response = await fetch(gridUrl(endpoint, `session/${encodeURIComponent(id)}`), {
      method: 'DELETE',
      headers: gridHeaders(endpoint),
      signal: AbortSignal.timeout(10_000),
    });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

/** A path under the Grid's URL (which may end in /wd/hub), without its user info (sent as a header instead). */
function gridUrl(endpoint: EndpointSpec, path: string): URL {
  const base = new URL(endpoint.url);
  base.username = '';
  base.password = '';
  if (!base.pathname.endsWith('/')) base.pathname = `${base.pathname}/`;
  const url = new URL(path, base);
  url.search = base.search;
  return url;
}

/**
 * The headers of every request to the Grid and of the session's CDP connection: the endpoint's own, and its user
 * info as Basic authorization (a Grid 4 started with --username/--password wants it on both; fetch refuses a URL
 * that holds it).
 */
export function gridHeaders(endpoint: EndpointSpec): Record<string, string> {
  const { username, password } = new URL(endpoint.url);
  if (!username && !password) return { ...endpoint.headers };
  const basic = Buffer.from(`${decodeURIComponent(username)}:${decodeURIComponent(password)}`).toString(
    'base64',
  );
  return { authorization: `Basic ${basic}`, ...endpoint.headers };
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
}
