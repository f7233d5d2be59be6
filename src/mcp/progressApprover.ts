// While a call waits for a human, the MCP client hears about it: a progress notification when the question is
// asked and every few seconds after, for requests that carry a progressToken. Clients that reset their request
// timeout on progress (the SDK's resetTimeoutOnProgress) then keep waiting instead of giving up at 60 s.

import { elementPhrase } from '../core/approvalDisplay.ts';
import type { ApprovalChoice, ApprovalRequest, Approver, AskOptions } from '../core/approvals.ts';
import { forDisplay } from '../core/displayText.ts';

export const defaultProgressIntervalMs = 5_000;

/** Sends one progress notification; failures (client gone) are the caller's to ignore. */
export type SendProgress = (progress: number, message: string) => Promise<void>;

export interface ProgressOptions {
  /** Where the human is asked, in words: "on the approval page", "in your MCP client". */
  readonly where: string;
  readonly send: SendProgress;
  readonly intervalMs?: number;
}

/** `approver`, reporting progress around each question it asks. */
export function withProgress(approver: Approver, options: ProgressOptions): Approver {
  return {
    get name() {
      return approver.name;
    },
    ask: (request, signal, ask) => askWithProgress(approver, request, signal, options, ask),
  };
}

async function askWithProgress(
  approver: Approver,
  request: ApprovalRequest,
  signal: AbortSignal | undefined,
  options: ProgressOptions,
  ask: AskOptions | undefined,
): Promise<ApprovalChoice> {
  const started = Date.now();
  const what = `${forDisplay(request.tool)}${elementPhrase(request)}`;
  let beat = 0;
  const report = () => {
    beat += 1;
    const waited = Math.round((Date.now() - started) / 1000);
    const message = `waiting for the human to approve ${what} (${options.where}${waited ? `, ${waited} s so far` : ''})`;
    options.send(beat, message).catch(() => undefined);
  };
  report();
  const timer = setInterval(report, options.intervalMs ?? defaultProgressIntervalMs);
  try {
    return await approver.ask(request, signal, ask);
  } finally {
    clearInterval(timer);
  }
}
