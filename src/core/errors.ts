// The one error type of tabward. Codes are a closed set; boundaries (MCP, HTTP, CLI) translate them once
// and never match on message text.

export const errorCodes = [
  'bad_input',
  'blocked',
  'rejected',
  // A human is asked and has not answered yet: the same call made again waits on the same question.
  'pending_approval',
  'timeout',
  // Stopped by its user or its server shutting down (Ctrl-C, SIGTERM), not by anything it met.
  'cancelled',
  'page_closed',
  'page_crashed',
  'dialog_open',
  'stale_ref',
  'not_found',
  // The site could not be reached: connection refused or reset, DNS, TLS.
  'network',
  // The site answered with an HTTP status of 400 or more where a page was expected.
  'http_error',
  'browser_unavailable',
  'attach_failed',
  'not_allowed',
  'internal',
] as const;

export type ErrorCode = (typeof errorCodes)[number];

export class TabwardError extends Error {
  readonly code: ErrorCode;
  /** What the user or agent can do about it; shown after the message. */
  readonly hint: string | undefined;

  constructor(code: ErrorCode, message: string, hint?: string) {
    super(message);
    this.name = 'TabwardError';
    this.code = code;
    this.hint = hint;
  }

  /** Message plus hint, the form every boundary shows. */
  describe(): string {
    return this.hint ? `${this.message} ${this.hint}` : this.message;
  }
}

export function isTabwardError(value: unknown): value is TabwardError {
  return value instanceof TabwardError;
}

/** Turns anything thrown into a TabwardError without losing the original message. */
export function asTabwardError(value: unknown): TabwardError {
  if (value instanceof TabwardError) return value;
  const message = value instanceof Error ? value.message : String(value);
  return new TabwardError('internal', message);
}
