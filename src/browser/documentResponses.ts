// The agent's documents at their response, in a browser with no egress proxy (the user's Chrome, a remote one),
// where the tab's and frames' hooks pause them (browser/networkGuard.ts):
// - headers that hand work to the browser process, whose own requests no CDP hook sees, are taken out: reports
//   (Reporting API, NEL) and speculation rules;
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

export async function answerDocumentResponse(
  cdp: CDPSession,
  event: PausedResponse,
  downloads: ResponseDownloads | undefined,
): Promise<void> {
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
    return;
  }
  const kept = headers.filter((header) => !browserWorkHeaders.has(header.name.toLowerCase()));
  if (kept.length === headers.length || event.responseErrorReason !== undefined) {
    await cdp.send('Fetch.continueRequest', { requestId: event.requestId });
    return;
  }
  // Chromium takes headers only with the status (measured: headers alone are refused, and the page then hangs).
  // Should it refuse them anyway, the document does not load with the headers it was to lose (fail closed).
  await cdp
    .send('Fetch.continueResponse', {
      requestId: event.requestId,
      responseCode: event.responseStatusCode ?? 200,
      responseHeaders: kept,
    })
    .catch(() =>
      cdp.send('Fetch.failRequest', { requestId: event.requestId, errorReason: 'BlockedByClient' }),
    );
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
