// What `POST /run` answers: a superset of Webhands' response, so that a client written for Webhands works
// unchanged — `ok`, `mode` (live | dry), `data`, `screenshotBase64`, `steps` as lines, `error` as one message
// ("… resend with confirm:true …" for an unconfirmed write) — with tabward's richer fields beside them: the
// step log with timings (`stepLog`), the error's code and step, and extraction warnings.

import type { RecipeResult, StepLog } from './runRecipe.ts';

export interface ServeResponse {
  readonly ok: boolean;
  readonly mode: 'live' | 'dry';
  readonly data: unknown;
  /** Base64 PNG: the final page when asked for, or the page where the run failed. */
  readonly screenshotBase64: string | null;
  /** One line per step that ran, as Webhands logs them ("type into #password (secret)"). */
  readonly steps: string[];
  /** The failure in one message, or null. */
  readonly error: string | null;
  readonly errorCode: string | null;
  readonly errorStep: StepLog['step'] | null;
  readonly stepLog: StepLog[];
  readonly warnings: string[];
  /** On a browser grid: the endpoint the run's browser started on, its credentials shown as ***. */
  readonly endpoint?: string;
  /** What the download steps brought: name, bytes, type, rows, and the file (base64) when kept. */
  readonly files?: RecipeResult['files'];
}

export function serveResponse(result: RecipeResult): ServeResponse {
  return {
    ok: result.ok,
    mode: result.mode,
    data: result.data,
    screenshotBase64: result.screenshot,
    steps: result.steps.map(stepLine),
    error: result.error?.message ?? null,
    errorCode: result.error?.code ?? null,
    errorStep: result.error?.step ?? null,
    stepLog: result.steps,
    warnings: result.warnings,
    ...(result.endpoint ? { endpoint: result.endpoint } : {}),
    ...(result.files ? { files: result.files } : {}),
  };
}

function stepLine(entry: StepLog): string {
  return entry.ok ? entry.detail : `${entry.detail} (failed: ${entry.error ?? 'unknown error'})`;
}

/** The HTTP status of a run's answer. */
export function statusOf(result: RecipeResult): 200 | 403 | 422 | 503 | 504 | 502 {
  if (result.ok) return 200;
  if (result.error?.code === 'not_allowed') return 403;
  if (result.error?.code === 'timeout') return 504;
  // The server is stopping: the run was cut off, and may be tried again once it is back.
  if (result.error?.code === 'cancelled') return 503;
  if (result.error?.code === 'bad_input') return 422;
  // No browser could be started for it (a grid's endpoints down): nothing ran, a retry later is safe.
  if (result.error?.code === 'browser_unavailable') return 503;
  return 502;
}
