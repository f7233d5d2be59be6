// Acting under the choke point (docs/architecture.md "The choke point"): the action runs with its pass open (when
// approved) and its tab's unpredicted requests held for its human; what was stopped and what left is noted for the
// result and the audit; what the result read taints the session (GuardState).

import type { PassSpec } from './actionPasses.ts';
import { joinStops, noStops, shownStops, stoppedSummary, stopsCount } from './approvedPass.ts';
import type { Backstop, ToldLines } from './backstop.ts';
import type { Trail } from './callTrail.ts';
import type { ActionLook, Caller, CallOutcome, GuardedAction } from './callTypes.ts';
import { TabwardError } from './errors.ts';
import type { GuardState } from './guardState.ts';
import type { HeldRequests } from './heldRequests.ts';
import type { Redactor } from './redact.ts';

/** The requests that left an audit record names one by one (the rest are counted). */
const maxSentLines = 10;

export interface ActingDeps {
  readonly backstop: Backstop | undefined;
  readonly redactor: () => Redactor;
  /** How long an approval's network pass may stay open while its action runs. */
  readonly passMaxMs: number;
  readonly state: GuardState;
  readonly held: HeldRequests;
}

export class Acting {
  /** Where each tab's last action ended, in the backstop's sequence: what it stopped later is told next. */
  private readonly tabMarks = new Map<string, number>();

  constructor(private readonly deps: ActingDeps) {}

  async act<R>(
    action: GuardedAction<R>,
    look: ActionLook,
    pass: PassSpec | undefined,
    trail: Trail,
    caller: Caller,
  ): Promise<CallOutcome<R>> {
    trail.outcome = 'ok';
    const { backstop } = this.deps;
    const mark = backstop?.mark() ?? 0;
    const opened = pass && backstop ? backstop.open(pass, this.deps.passMaxMs) : undefined;
    // A read cannot make the page send anything: only actions answer for their tab's requests.
    const attendance =
      look.facts.kind === 'read'
        ? undefined
        : backstop?.attend(
            this.deps.held.attendant(action, look, caller, trail, () => backstop.sensitiveReadsSince(mark)),
          );
    const earlier = this.stoppedAfterLastAction(look.facts.tab?.id);
    // Every stop while it ran (a popup it opened, a request of no tab); one of another tab names that tab.
    const stoppedNow = () => {
      const stops = this.stopLines(backstop?.stoppedSince(mark, undefined, look.facts.tab?.id));
      const told = joinStops(earlier, stops);
      if (stopsCount(told) > 0) trail.blocked = shownStops(told, 5);
      return stops;
    };
    // Writes into sensitive pages come first (sentSince), and no flood of another kind pushes them out of the log
    // (rankedLog.ts); what it let go for room is counted.
    const sentNow = () => {
      const { lines, unkept, atLeast } = backstop?.sentSince(mark) ?? { lines: [], unkept: 0 };
      const shown = lines.slice(0, maxSentLines).map((line) => this.deps.redactor().text(line));
      const more = lines.length - shown.length + unkept;
      const counted = more > 0 ? [`(and ${atLeast ? 'at least ' : ''}${more} more)`] : [];
      if (lines.length + unkept > 0) trail.sent = [...shown, ...counted];
    };
    try {
      const value = await action.act(look);
      // What the action found as it acted may mask more of its arguments (a key into a field that became a password).
      const args = action.auditArgs?.();
      if (args) trail.args = this.deps.redactor().value(args);
      const targets = action.auditTargets?.(value);
      if (targets) trail.targets = this.deps.redactor().value(targets);
      await attendance?.settled();
      sentNow();
      // Reads report what they read; the session is tainted here, for every front end, in one place.
      this.deps.state.recordReads(action.readsOf?.(value) ?? []);
      return { value, stopped: joinStops(earlier, stoppedNow()) };
    } catch (error) {
      await attendance?.settled();
      sentNow();
      // An action whose request the backstop stopped fails in the browser: say what was stopped and why.
      const stopped = stoppedNow();
      // A read makes the page send nothing: its own failure is told as it is, not as the page's stopped requests.
      if (stopsCount(stopped) > 0 && look.facts.kind !== 'read')
        throw new TabwardError(
          'blocked',
          stoppedSummary(stopped),
          'A human approval is needed for that page.',
        );
      throw error;
    } finally {
      const tab = look.facts.tab?.id;
      if (tab !== undefined && backstop) this.tabMarks.set(tab, backstop.mark());
      attendance?.detach();
      // A redirect or a late submit right after the action is still its doing; later requests are not. A pass
      // with no tab (new_page) ends with its action: another action's new tab must not ride on it.
      opened?.end(pass?.scope === undefined ? 0 : 2_000);
    }
  }

  /**
   * What the backstop stopped in this tab after its previous action returned (a request sent too late to be
   * asked about, a page's own write): told with the next result in the tab, so a refusal is never silent.
   */
  private stoppedAfterLastAction(tab: string | undefined): ToldLines {
    const since = tab === undefined ? undefined : this.tabMarks.get(tab);
    if (since === undefined || !this.deps.backstop) return noStops;
    return this.stopLines(
      this.deps.backstop.stoppedSince(since, tab),
      'after the previous action in this tab returned: ',
    );
  }

  /** Stops as told to the agent and the audit: each line redacted, the count of those not kept carried along. */
  private stopLines(told: ToldLines | undefined, lead = ''): ToldLines {
    if (!told) return noStops;
    return { ...told, lines: told.lines.map((line) => this.deps.redactor().text(`${lead}${line}`)) };
  }
}
