// The auto-mode login flow of the source article: a navigation lands on a login wall in the isolated browser,
// the human is asked whether to use their logged-in Chrome for that site, and on yes the session attaches to
// it and reopens the same URL in an agent-owned tab. A failed attach keeps the isolated session. The human is
// asked only when their Chrome can be reached (its DevToolsActivePort file is there, or --browser-url answers):
// otherwise a yes could not work, and the agent is told how the human turns remote debugging on instead.

import { resolveEndpoint } from '../browser/connect.ts';
import type { BrowserSession } from '../browser/session.ts';
import type { Approver } from '../core/approvals.ts';
import { isTabwardError } from '../core/errors.ts';
import { originOf } from '../core/guard.ts';
import type { ToolResult } from './tool.ts';
import { text } from './tool.ts';

export interface SwitchDeps {
  readonly session: BrowserSession;
  readonly approver: Approver;
  readonly nextId: () => string;
  readonly reopen: (url: string) => Promise<ToolResult>;
  /** Records the human's answer and what came of it in the audit log. */
  readonly audit: (url: string, choice: string, outcome: 'ok' | 'rejected' | 'error', error?: string) => void;
}

export async function maybeSwitchOnLoginWall(result: ToolResult, deps: SwitchDeps): Promise<ToolResult> {
  const wall = result.loginWall;
  if (!wall || deps.session.mode !== 'isolated') return result;
  const origin = originOf(wall.url);
  const unreachable = await whyUnreachable(deps.session);
  if (unreachable) {
    deps.audit(wall.url, 'not asked', 'error', unreachable);
    return appendNote(
      result,
      `Login wall at ${origin} (${wall.verdict.evidence.join('; ')}). The user was not asked to switch to their Chrome: it cannot be reached. ${unreachable} Tell the user this; once it is on, call browser_connect.`,
    );
  }
  const choice = await deps.approver.ask({
    id: deps.nextId(),
    tool: 'browser_connect',
    kind: 'mode',
    reason: `${origin} needs a login. Use your own Chrome, where you may be logged in, to open it?`,
    rule: 'login-wall',
    sensitive: false,
    approveAllAllowed: false,
    url: wall.url,
    origin,
    args: { url: wall.url },
    frontEnd: 'auto',
  });
  if (choice.choice !== 'approve' && choice.choice !== 'approve-all') {
    deps.audit(wall.url, choice.choice, 'rejected');
    return appendNote(result, 'The user chose not to use their Chrome; still in the isolated browser.');
  }
  try {
    await deps.session.attachShared();
  } catch (error) {
    const why = isTabwardError(error) ? error.describe() : String(error);
    deps.audit(wall.url, choice.choice, 'error', why);
    return appendNote(result, `Could not use your Chrome, staying isolated: ${why}`);
  }
  deps.audit(wall.url, choice.choice, 'ok');
  const reopened = await deps.reopen(wall.url);
  const evidence = wall.verdict.evidence.join('; ');
  return appendNote(
    reopened,
    `Login wall in the isolated browser (${evidence}). Switched to your Chrome; opened in a new agent tab:`,
    true,
  );
}

/** Why the user's Chrome cannot be attached to right now (with how to enable it), or undefined when it can. */
export async function whyUnreachable(session: BrowserSession): Promise<string | undefined> {
  try {
    await resolveEndpoint(session.config.attach, 3000);
    return undefined;
  } catch (error) {
    return isTabwardError(error) ? error.describe() : String(error);
  }
}

function appendNote(result: ToolResult, note: string, first = false): ToolResult {
  const content = first ? [text(note), ...result.content] : [...result.content, text(note)];
  const { loginWall: _wall, ...rest } = result;
  return { ...rest, content };
}
