// The agent's documents at their response, in a browser with no egress proxy (the user's Chrome, a remote one),
// where the tab's and frames' hooks pause them (browser/networkGuard.ts):
// - headers that hand work to the browser process, whose own requests no CDP hook sees, are taken out: reports
//   (Reporting API, NEL) and speculation rules. The document is then answered with its body and the remaining
//   headers (Fetch.fulfillRequest), not let go with them (Fetch.continueResponse): the network service has parsed
//   the headers before the pause, and Chromium keeps that parse for a response continued with other headers
//   (measured on Chromium 156: a CSP violation still reported to the stripped Reporting-Endpoints' endpoint, with
//   what the page put in the blocked URL). A fulfilled response's headers are parsed anew;
// - a document that is a download (`Content-Disposition: attachment`) is taken by tabward: its body is read here,
//   within the cap, handed to the session's download keeper (browser/downloads.ts), and the browser is told the
//   request failed, so that nothing lands in the user's Downloads folder unasked. A download behaviour set over CDP
//   would redirect the user's own downloads too (measured: Page.setDownloadBehavior applies to the whole profile).

import type { CDPSession } from 'playwright-core';
import { swallow, swallowed } from '../core/debug.ts';

const browserWorkHeaders = new Set(['report-to', 'reporting-endpoints', 'nel', 'speculation-rules']);

export interface PausedResponse {
  readonly requestId: string;
  readonly request: { readonly url: string };
  readonly responseStatusCode?: number;
  readonly responseErrorReason?: string;
  readonly responseHeaders?: readonly { readonly name: string; readonly value: string }[];
}

/** Where a download taken at its response goes: kept (or refused) by the session, given a way to read its body. */
export type ResponseDownloads = (download: {
  readonly url: string;
  readonly suggested: string;
  /** The body, or undefined when it is over `maxBytes` (nothing more is read). */
  readonly read: (maxBytes: number) => Promise<Buffer | undefined>;
}) => Promise<void>;

/** Answers a paused document response; resolves with why it was refused, when it was. */
export async function answerDocumentResponse(
  cdp: CDPSession,
  event: PausedResponse,
  downloads: ResponseDownloads | undefined,
): Promise<string | undefined> {
  const headers = event.responseHeaders ?? [];
  const disposition = headers.find((header) => header.name.toLowerCase() === 'content-disposition')?.value;
  if (
    downloads &&
    event.responseErrorReason === undefined &&
    disposition &&
    /^\s*attachment/i.test(disposition)
  ) {
    try {
      await downloads({
        url: event.request.url,
        suggested: fileNameOf(disposition) ?? lastSegment(event.request.url),
        read: (maxBytes) => readBody(cdp, event.requestId, maxBytes),
      });
    } finally {
      await cdp
        .send('Fetch.failRequest', { requestId: event.requestId, errorReason: 'Aborted' })
        .catch(
          swallow(
            'browser',
            'documentResponses.answerDocumentResponse: failing the request of a download taken',
          ),
        );
    }
    return undefined;
  }
  const kept = headers.filter((header) => !browserWorkHeaders.has(header.name.toLowerCase()));
  // A redirect commits no document: nothing of it is the page's to report with or preload from.
  const redirect = (event.responseStatusCode ?? 0) >= 300 && (event.responseStatusCode ?? 0) < 400;
  if (kept.length === headers.length || event.responseErrorReason !== undefined || redirect) {
    await cdp.send('Fetch.continueRequest', { requestId: event.requestId });
    return undefined;
  }
  const refused = `it hands the browser work of its own (${dropped(headers)}: the browser's own requests, which no hook sees)`;
  // The body as the network service decoded it: its encoding and length headers no longer describe it.
  const body = await readBody(cdp, event.requestId, maxRewrittenBytes).catch(
    swallow('browser', 'documentResponses.answerDocumentResponse: a body that could not be read'),
  );
  const answered =
    body &&
    (await cdp
      .send('Fetch.fulfillRequest', {
        requestId: event.requestId,
        responseCode: event.responseStatusCode ?? 200,
        responseHeaders: kept.filter((header) => !bodyHeaders.has(header.name.toLowerCase())),
        body: body.toString('base64'),
      })
      .then(
        () => true,
        swallow('browser', 'documentResponses.answerDocumentResponse: a rewritten document refused'),
      ));
  if (answered) return undefined;
  // Fail closed: a document that keeps those headers would be parsed with them.
  await cdp
    .send('Fetch.failRequest', { requestId: event.requestId, errorReason: 'BlockedByClient' })
    .catch(swallow('browser', 'documentResponses.answerDocumentResponse: failing a document not rewritten'));
  return body
    ? `${refused}, and the browser did not take it without them`
    : `${refused}, and its body could not be read within ${maxRewrittenBytes >> 20} MB to load it without them`;
}

/** A document that hands the browser work is read whole to be answered without it; past this, it is refused. */
const maxRewrittenBytes = 64 << 20;
/** Headers that describe the body as it came over the wire, not as it is answered. */
const bodyHeaders = new Set(['content-encoding', 'content-length', 'transfer-encoding']);

function dropped(headers: readonly { readonly name: string }[]): string {
  return headers
    .map((header) => header.name.toLowerCase())
    .filter((name) => browserWorkHeaders.has(name))
    .join(', ');
}

/** Reads a paused response's body as a stream, stopping (undefined) once it is over `maxBytes`. */
async function readBody(cdp: CDPSession, requestId: string, maxBytes: number): Promise<Buffer | undefined> {
  const { stream } = (await cdp.send('Fetch.takeResponseBodyAsStream', { requestId })) as { stream: string };
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for (;;) {
      const chunk = (await cdp.send('IO.read', { handle: stream, size: 1 << 20 })) as {
        data: string;
        base64Encoded?: boolean;
        eof: boolean;
      };
      const bytes = Buffer.from(chunk.data, chunk.base64Encoded ? 'base64' : 'utf8');
      size += bytes.length;
      if (size > maxBytes) return undefined;
      chunks.push(bytes);
      if (chunk.eof) return Buffer.concat(chunks);
    }
  } finally {
    await cdp
      .send('IO.close', { handle: stream })
      .catch(swallow('browser', 'documentResponses.readBody: cdp.send("IO.close", { handle: stream })'));
  }
}

/** The file name a Content-Disposition header suggests (RFC 6266: filename*, else filename). */
function fileNameOf(disposition: string): string | undefined {
  const extended = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(disposition)?.[1];
  if (extended) {
    try {
      return decodeURIComponent(extended.trim());
    } catch (error) {
      // a malformed one: the plain filename below, if any
      swallowed(
        'browser',
        'documentResponses.fileNameOf: a malformed one: the plain filename below, if any',
        error,
      );
    }
  }
  return /filename\s*=\s*"([^"]*)"|filename\s*=\s*([^;]+)/.exec(disposition)?.slice(1).find(Boolean)?.trim();
}

function lastSegment(url: string): string {
  try {
    return new URL(url).pathname.split('/').filter(Boolean).pop() ?? 'download';
  } catch {
    return 'download';
  }
}
