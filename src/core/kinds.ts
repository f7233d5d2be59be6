// Vocabulary shared by the guard and every front end: what a tool may do, and which browser mode is live.

export const toolKinds = ['read', 'navigate', 'write', 'mode'] as const;
export type ToolKind = (typeof toolKinds)[number];

export const browserModes = ['isolated', 'shared', 'remote'] as const;
export type BrowserMode = (typeof browserModes)[number];

/**
 * How strict rule 6 of the guard is for ordinary (not sensitive) writes: default (ask outside the isolated
 * browser), strict (always ask), sensitive-only (never), destructive-asks (only writes that read as destructive:
 * delete, refund, pay...; what recipes run under).
 */
export const writePolicies = ['default', 'strict', 'sensitive-only', 'destructive-asks'] as const;
export type WritePolicy = (typeof writePolicies)[number];

/**
 * The tool categories `--tools` turns on: core (always; the browser tools every agent needs) and devtools
 * (console, network requests, emulation: off by default, since every tool listed costs tokens on every turn).
 */
export const toolCategories = ['core', 'devtools'] as const;
export type ToolCategory = (typeof toolCategories)[number];

/**
 * What a tool does besides its kind, declared with the tool (tools/tool.ts). The guard and the runner go by these,
 * never by a tool's name: `scripts/check-call-path.mjs` rejects comparing with a tool's name in core/ and in
 * tools/runner.ts (docs/architecture.md "Tool effects").
 */
export interface ToolEffects {
  /** Closes a tab (close_page): the agent may close only its own outside the isolated browser. */
  readonly closesTab?: boolean;
  /** Attaches to the user's own Chrome and its logins (browser_connect): a human says yes each time. */
  readonly attachesUserBrowser?: boolean;
  /** Reports what the guard holds (browser_status): the runner adds grants, taint, policy and approver. */
  readonly reportsGuardState?: boolean;
  /** Opens a new agent tab at `{ url }` (new_page): the login-wall switch reopens the page with it. */
  readonly opensTab?: boolean;
  /** Reads a tab, `{ pageId }`, as a snapshot (take_snapshot): the read the `snapshot` option makes. */
  readonly snapshotsTab?: boolean;
}
