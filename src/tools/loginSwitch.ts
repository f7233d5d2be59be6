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

export interface SwitchDeps<R> {
  readonly session: BrowserSession;
  readonly approver: Approver;
  readonly nextId: () => string;
  /** Opens the URL in a new agent tab of the user's Chrome, through the guard like any navigation. */
  readonly reopen: (url: string) => Promise<R>;
  /** Records the human's answer and what came of it in the audit log. */
  readonly audit: (url: string, choice: string, outcome: 'ok' | 'rejected' | 'error', error?: string) => void;
}

/** What came of a login wall: a note after the call's result, or the reopened tab's result after a note. */
export type SwitchOutcome<R> =
  | { readonly note: string; readonly reopened?: undefined }
  | { readonly note: string; readonly reopened: R };

type LoginWall = NonNullable<ToolResult['loginWall']>;

/** Undefined when no switch is to be offered (not in the isolated browser). */
export async function maybeSwitchOnLoginWall<R>(
  wall: LoginWall,
  deps: SwitchDeps<R>,
): Promise<SwitchOutcome<R> | undefined> {
  if (deps.session.mode !== 'isolated') return undefined;
  const origin = originOf(wall.url);
  const unreachable = await whyUnreachable(deps.session);
  if (unreachable) {
    deps.audit(wall.url, 'not asked', 'error', unreachable);
    return {
      note: `Login wall at ${origin} (${wall.verdict.evidence.join('; ')}). The user was not asked to switch to their Chrome: it cannot be reached. ${unreachable} Tell the user this; once it is on, call browser_connect.`,
    };
  }
  const choice = await deps.approver.ask({
    id: deps.nextId(),
    tool: 'browser_connect',
    kind: 'mode',
    // The whole session moves, not this page alone: the question says so (an attack review found "to open it"
    // understated what a yes hands over).
    reason: `${origin} needs a login. Use your own Chrome and its logins for this page and every page the agent opens after it (until you disconnect)?`,
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
    return { note: 'The user chose not to use their Chrome; still in the isolated browser.' };
  }
  try {
    await deps.session.attachShared();
  } catch (error) {
    const why = isTabwardError(error) ? error.describe() : String(error);
    deps.audit(wall.url, choice.choice, 'error', why);
    return { note: `Could not use your Chrome, staying isolated: ${why}` };
  }
  deps.audit(wall.url, choice.choice, 'ok');
  const reopened = await deps.reopen(wall.url);
  const evidence = wall.verdict.evidence.join('; ');
  return {
    note: `Login wall in the isolated browser (${evidence}). Switched to your Chrome; opened in a new agent tab:`,
    reopened,
  };
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
