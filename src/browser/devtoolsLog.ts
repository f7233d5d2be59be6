// What each tab logged and requested, for the devtools reads (console messages, network requests): recorded from
// Playwright's page events from the moment tabward tracks the tab (isolated, remote, and the user's own tabs once
// attached), bounded per tab (the last 500 of each, from the last 3 navigations). Headers and bodies are read
// from the browser when asked for, not copied for every request. Each entry keeps the addresses of the documents
// it came from: what it shows is a read of those pages, and taints like one.

import type { Frame, Page, Request, Response } from 'playwright-core';
import { withDeadline } from './deadline.ts';
import { loadedUrlOf } from './loadedUrls.ts';
import type { TrackedPage } from './pages.ts';

export interface ConsoleEntry {
  readonly id: number;
  readonly navigation: number;
  readonly type: string;
  readonly text: string;
  /** Where it was logged from: script URL, line and column. */
  readonly source?: string;
  /** The pages the message may have come from (every document of the tab then, the script), for taint. */
  readonly from: readonly string[];
}

export interface RequestEntry {
  readonly id: number;
  readonly navigation: number;
  readonly method: string;
  readonly url: string;
  readonly resourceType: string;
  state: 'pending' | 'done' | 'failed';
  status?: number;
  statusText?: string;
  failure?: string;
  /** The documents that sent it (its frame, the tab's top document), for taint. */
  readonly from: readonly string[];
}

export interface Body {
  readonly text?: string;
  /** Bytes in all (the text may be cut short by the caller). */
  readonly bytes: number;
  /** Why there is no text: binary, not finished, or what the browser said. */
  readonly missing?: string;
}

export interface RequestDetails {
  readonly requestHeaders: readonly [string, string][];
  readonly requestBody?: Body;
  readonly responseHeaders?: readonly [string, string][];
  readonly responseBody?: Body;
}

/** What the tab keeps: entries of each kind, and navigations (the current one and two before it). */
export const keptEntries = 500;
export const keptNavigations = 3;
/** The most of one body read into memory (redaction needs the whole of what is shown). */
const maxBodyBytes = 1_000_000;
/**
 * The most of one message kept: twice what is shown (10,000), so that a secret value cut here lies past what is
 * shown even after the redactor lengthens the text before it.
 */
const maxConsoleChars = 20_000;

/** One recorder per browser session: entry ids are unique across its tabs. */
export class DevtoolsRecorder {
  private seq = 0;
  private readonly logs = new WeakMap<TrackedPage, TabLog>();

  attach(tab: TrackedPage): void {
    if (!this.logs.has(tab)) this.logs.set(tab, new TabLog(tab.page, () => ++this.seq));
  }

  logOf(tab: TrackedPage): TabLog | undefined {
    return this.logs.get(tab);
  }
}

export class TabLog {
  /** Main-frame document loads seen so far; entries are numbered by the one they happened in. */
  navigation = 1;
  private readonly messages: ConsoleEntry[] = [];
  private readonly requests: RequestEntry[] = [];
  private readonly live = new Map<number, Request>();
  private readonly byRequest = new WeakMap<Request, RequestEntry>();

  constructor(
    private readonly page: Page,
    private readonly nextId: () => number,
  ) {
    page.on('console', (message) => {
      const { url, lineNumber, columnNumber } = message.location();
      const source = url ? { source: `${url}:${lineNumber + 1}:${columnNumber + 1}`, script: url } : {};
      this.log({ type: message.type(), text: message.text(), ...source });
    });
    // An uncaught error is what a developer looks for first; the console shows it too.
    page.on('pageerror', (error) =>
      this.log({ type: 'error', text: `Uncaught ${error.stack ?? `${error.name}: ${error.message}`}` }),
    );
    page.on('request', (request) => this.sent(request));
    page.on('response', (response) => this.answered(response));
    page.on('requestfinished', (request) => this.ended(request, 'done'));
    page.on('requestfailed', (request) => this.ended(request, 'failed'));
  }

  /** Console messages of the current navigation, or of the kept ones too. */
  consoleEntries(includePreserved: boolean): ConsoleEntry[] {
    return includePreserved
      ? [...this.messages]
      : this.messages.filter((m) => m.navigation === this.navigation);
  }

  requestEntries(includePreserved: boolean): RequestEntry[] {
    return includePreserved
      ? [...this.requests]
      : this.requests.filter((r) => r.navigation === this.navigation);
  }

  consoleEntry(id: number): ConsoleEntry | undefined {
    return this.messages.find((entry) => entry.id === id);
  }

  requestEntry(id: number): RequestEntry | undefined {
    return this.requests.find((entry) => entry.id === id);
  }

  /** Headers and bodies of a kept request, as the browser still has them. */
  async details(id: number, timeoutMs: number): Promise<RequestDetails | undefined> {
    const request = this.live.get(id);
    const entry = this.requestEntry(id);
    if (!request || !entry) return undefined;
    const read = async (): Promise<RequestDetails> => {
      const requestHeaders = await request.headersArray();
      const posted = request.postDataBuffer();
      const response = await request.response();
      return {
        requestHeaders: pairs(requestHeaders),
        ...(posted ? { requestBody: bodyOf(posted) } : {}),
        ...(response
          ? {
              responseHeaders: pairs(await response.headersArray()),
              responseBody: await responseBody(response, entry),
            }
          : {}),
      };
    };
    return withDeadline(read(), timeoutMs, `Reading request ${id}`);
  }

  private log({
    script,
    ...message
  }: {
    type: string;
    text: string;
    source?: string;
    script?: string;
  }): void {
    // Playwright does not say which frame logged it: every document of the tab counts, so a message a sensitive
    // frame logged (from a script served elsewhere, before the frame went away) taints like a read of that frame.
    const from = [...this.page.frames().flatMap(documentUrls), ...(script ? [script] : [])];
    const text =
      message.text.length > maxConsoleChars
        ? `${message.text.slice(0, maxConsoleChars)}… (${message.text.length} characters)`
        : message.text;
    this.messages.push({ ...message, text, id: this.nextId(), navigation: this.navigation, from });
    if (this.messages.length > keptEntries) this.messages.shift();
  }

  private sent(request: Request): void {
    const frame = frameOf(request);
    // A new document in the tab (not a redirect hop of one): a new navigation, as DevTools counts them.
    if (frame === this.page.mainFrame() && request.isNavigationRequest() && !request.redirectedFrom())
      this.newNavigation();
    const entry: RequestEntry = {
      id: this.nextId(),
      navigation: this.navigation,
      method: request.method(),
      url: request.url(),
      resourceType: request.resourceType(),
      state: 'pending',
      from: [...(frame ? documentUrls(frame) : []), ...documentUrls(this.page.mainFrame())],
    };
    this.requests.push(entry);
    this.live.set(entry.id, request);
    this.byRequest.set(request, entry);
    if (this.requests.length > keptEntries) this.forgetRequest();
  }

  private answered(response: Response): void {
    const entry = this.byRequest.get(response.request());
    if (!entry) return;
    entry.status = response.status();
    entry.statusText = response.statusText();
  }

  private ended(request: Request, state: 'done' | 'failed'): void {
    const entry = this.byRequest.get(request);
    if (!entry) return;
    entry.state = state;
    const failure = request.failure()?.errorText;
    if (state === 'failed' && failure) entry.failure = failure;
  }

  private newNavigation(): void {
    this.navigation++;
    const oldest = this.navigation - keptNavigations + 1;
    while (this.messages[0] && this.messages[0].navigation < oldest) this.messages.shift();
    while (this.requests[0] && this.requests[0].navigation < oldest) this.forgetRequest();
  }

  private forgetRequest(): void {
    const gone = this.requests.shift();
    if (gone) this.live.delete(gone.id);
  }
}

async function responseBody(response: Response, entry: RequestEntry): Promise<Body> {
  if (entry.state === 'pending') return { bytes: 0, missing: 'not finished yet' };
  if (entry.status !== undefined && entry.status >= 300 && entry.status < 400)
    return { bytes: 0, missing: 'a redirect has no body' };
  try {
    return bodyOf(await response.body());
  } catch (error) {
    const why = error instanceof Error ? error.message.split('\n')[0] : String(error);
    return { bytes: 0, missing: `the browser no longer has it (${why})` };
  }
}

/** Text when the bytes read as UTF-8 text, else only their size. */
function bodyOf(bytes: Buffer): Body {
  const head = bytes.subarray(0, maxBodyBytes);
  if (head.includes(0)) return { bytes: bytes.length, missing: 'binary' };
  const text = head.toString('utf8');
  // A cut can split the last character; more than a few undecodable bytes is not text.
  const undecodable = text.match(/\uFFFD/g)?.length ?? 0;
  if (undecodable > 2 + text.length / 100) return { bytes: bytes.length, missing: 'binary' };
  return { text, bytes: bytes.length };
}

function pairs(headers: { name: string; value: string }[]): [string, string][] {
  return headers.map(({ name, value }) => [name.toLowerCase(), value]);
}

/** The URL a frame shows and the one its document was loaded from. */
function documentUrls(frame: Frame): string[] {
  const loaded = loadedUrlOf(frame);
  return [frame.url(), ...(loaded ? [loaded] : [])];
}

function frameOf(request: Request): Frame | undefined {
  try {
    return request.frame();
  } catch {
    // A service worker's request has no frame.
    return undefined;
  }
}
