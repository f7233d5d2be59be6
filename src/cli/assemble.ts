// Assembling a guarded browser from command-line options: rules, secrets, browser session, approver, audit
// log and the ToolRunner that ties them together. Shared by `tabward mcp` and `tabward demo`.

import { join } from 'node:path';
import { AuditLog, processSession } from '../audit/auditLog.ts';
import { NetworkGuard } from '../browser/networkGuard.ts';
import { BrowserSession } from '../browser/session.ts';
import { ActionPasses } from '../core/actionPasses.ts';
import { noApprover } from '../core/approvals.ts';
import type { BrowserMode, ToolCategory, WritePolicy } from '../core/kinds.ts';
import { saveSessionRecipe } from '../recipes/savedRecipes.ts';
import { toolsFor } from '../tools/catalogue.ts';
import { ToolRunner } from '../tools/runner.ts';
import { type BrowserFlags, browserConfig, loadRulesAndSecrets } from './config.ts';
import { ConsentDesk } from './consentDesk.ts';
import { checkAppendable, ensureHome, homeAuditPath } from './home.ts';
import { boundedStep, closeBrowserSession } from './shutdown.ts';

export interface GuardedBrowserOptions extends BrowserFlags {
  readonly outputDir?: string | undefined;
  readonly downloadMaxMb?: number | undefined;
  readonly downloadMaxCount?: number | undefined;
  readonly mode: BrowserMode | 'auto';
  readonly rules: readonly string[];
  readonly ignoreBadRules?: boolean | undefined;
  readonly secrets?: string | undefined;
  readonly secretEnv?: readonly string[] | undefined;
  readonly auditLog?: string | undefined;
  readonly policy: WritePolicy;
  readonly timeout: number;
  /**
   * The consent desk (inbox, `tabward approvals`, notification, approval page) for a front end with no terminal of
   * its own: how long a call waits before "still waiting", whether to notify. False: none (the agent asks in its
   * terminal).
   */
  readonly consent:
    | false
    | { readonly waitMs: number; readonly notify: boolean; readonly humanVerified?: boolean };
  /** The tool categories offered (`--tools`); default core only. */
  readonly tools?: readonly ToolCategory[] | undefined;
}

export interface GuardedBrowser {
  readonly session: BrowserSession;
  readonly network: NetworkGuard;
  readonly runner: ToolRunner;
  readonly consent: ConsentDesk | undefined;
  readonly auditPath: string;
  close(): Promise<void>;
}

export async function assembleGuardedBrowser(
  options: GuardedBrowserOptions,
  log: (line: string) => void,
): Promise<GuardedBrowser> {
  const { rules, secrets } = loadRulesAndSecrets(
    options.rules,
    options.secrets,
    log,
    options.secretEnv,
    options.ignoreBadRules === true,
  );
  // tabward's own servers join protectedPorts as they start: the agent's browser can never reach them.
  const network = new NetworkGuard(rules, new ActionPasses(), new Set());
  const categories = options.tools ?? ['core'];
  const session = new BrowserSession({
    ...browserConfig(options.mode === 'auto' ? 'isolated' : options.mode, options, log),
    network,
    // What tabs log and request is recorded only when a tool can read it.
    ...(categories.includes('devtools') ? { devtools: true } : {}),
    downloads: {
      folder: options.outputDir ?? join(ensureHome(log), 'downloads', processSession),
      maxBytes: (options.downloadMaxMb ?? 50) * 1024 * 1024,
      maxCount: options.downloadMaxCount ?? 100,
      afterActionMs: 5_000,
    },
  });
  // Started by the front end once it is serving (ConsentDesk.start). Its page tokens are secrets: nothing the
  // agent reads may show one; its page's port is tabward's own, which the agent's browser never reaches.
  const consent = options.consent
    ? new ConsentDesk({
        home: ensureHome(log),
        waitMs: options.consent.waitMs,
        maxWaitMs: options.consent.waitMs,
        notify: options.consent.notify,
        humanVerified: options.consent.humanVerified === true,
        secret: { made: (token) => secrets.redactAlso(token), gone: (token) => secrets.forget(token) },
        ownPort: (port) => network.protectedPorts.add(port),
        log,
      })
    : undefined;
  // Refuse to start rather than fail every tool call later on an audit log that cannot be written.
  const auditPath = options.auditLog ?? homeAuditPath(log);
  checkAppendable(auditPath, '--audit-log (or TABWARD_HOME)');
  const runner = new ToolRunner({
    tools: toolsFor(categories),
    context: {
      session,
      secrets,
      timeoutMs: options.timeout,
      // The agent's save_recipe: this process's session, from the log it writes, into the home's recipes folder.
      saveRecipe: (name) =>
        saveSessionRecipe(auditPath, join(ensureHome(log), 'recipes'), processSession, name),
    },
    network,
    rules,
    approver: consent?.approver() ?? noApprover,
    audit: new AuditLog(auditPath),
    policy: options.policy,
    autoSwitch: options.mode === 'auto',
  });
  // What the inbox itself decides (an answer ignored because its call is gone, a question expired) is audited.
  if (consent)
    consent.record = (line) =>
      runner.path.recordEvent({
        tool: '(approval)',
        kind: 'approval',
        frontEnd: 'human',
        args: {},
        mode: session.mode,
        decision: 'block',
        reason: line,
        outcome: 'blocked',
        durationMs: 0,
      });
  return {
    session,
    network,
    runner,
    consent,
    auditPath,
    close: async () => {
      // The browser first: a tab of it on the approval page holds a connection that keeps the page's server
      // from closing. Each step is bounded; a browser still there after its step is killed.
      await closeBrowserSession(session, log);
      // Calls the closing browser ended have recorded their end; any other still running is ended on the record.
      await runner.path.settle(2_000, 'tabward shut down before the call ended');
      await boundedStep('stopping the approval inbox', consent?.stop() ?? Promise.resolve(), log);
    },
  };
}
