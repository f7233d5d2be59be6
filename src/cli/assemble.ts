// Assembling a guarded browser from command-line options: rules, secrets, browser session, approver, audit
// log and the ToolRunner that ties them together. Shared by `tabward mcp` and `tabward demo`.

import { join } from 'node:path';
import { AuditLog, processSession } from '../audit/auditLog.ts';
import { ClientTabs } from '../browser/clientTabs.ts';
import { NetworkGuard } from '../browser/networkGuard.ts';
import { passwordSeal } from '../browser/passwordSeals.ts';
import { type BrowserConfig, BrowserSession } from '../browser/session.ts';
import { SharedIsolatedBrowser } from '../browser/sharedIsolatedBrowser.ts';
import { SharedProfileTaint } from '../browser/sharedProfileTaint.ts';
import { ActionPasses } from '../core/actionPasses.ts';
import { noApprover } from '../core/approvals.ts';
import type { AuditSink } from '../core/audit.ts';
import type { BrowserMode, ToolCategory, WritePolicy } from '../core/kinds.ts';
import { saveSessionRecipe } from '../recipes/savedRecipes.ts';
import { toolsFor } from '../tools/catalogue.ts';
import { ToolRunner } from '../tools/runner.ts';
import { type BrowserFlags, browserConfig, loadRulesAndSecrets } from './config.ts';
import { ConsentDesk } from './consentDesk.ts';
import { checkAppendable, ensureHome, homeAuditPath } from './home.ts';
import { boundedStep, closeBrowserSession, killLaunchedBrowser } from './shutdown.ts';

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
  /** Every client uses the process's own session (`--share-context`): browser_status says so. */
  readonly shareContext?: boolean | undefined;
}

/** One client's world: its browser session (context, tabs), network guard (taint, passes), runner (grants). */
export interface ClientWorld {
  /** The audit `session` of every record its calls write (and its save_recipe's session). */
  readonly sessionId: string;
  readonly session: BrowserSession;
  readonly network: NetworkGuard;
  readonly runner: ToolRunner;
  /** Closes its browser context (or browser) and ends its calls still open on the record. */
  close(): Promise<void>;
}

export interface GuardedBrowser extends ClientWorld {
  readonly consent: ConsentDesk | undefined;
  readonly auditPath: string;
  /**
   * A world of its own for one more MCP client (an `--http` session): its own context in the one shared browser
   * (or its own connection to the user's Chrome or the browser service), tabs, taint, grants, passes and audit
   * session. Closed with `close()` of its own, or with everything at exit.
   */
  openClient(): ClientWorld;
  /** The client worlds open now. */
  readonly clients: number;
  /** Starts the browser clients' contexts will open in (isolated mode), before the first client needs it. */
  warmUpClients(): boolean;
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
  // tabward's own servers join protectedPorts as they start: no client's browser can ever reach them.
  const protectedPorts = new Set<number>();
  const categories = options.tools ?? ['core'];
  const mode = options.mode === 'auto' ? 'isolated' : options.mode;
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
        ownPort: (port) => protectedPorts.add(port),
        log,
      })
    : undefined;
  // Refuse to start rather than fail every tool call later on an audit log that cannot be written.
  const auditPath = options.auditLog ?? homeAuditPath(log);
  checkAppendable(auditPath, '--audit-log (or TABWARD_HOME)');
  const audit = new AuditLog(auditPath);
  const downloadsRoot = options.outputDir ?? join(ensureHome(log), 'downloads', processSession);
  const makeWorld = (sessionId: string, sharing: Partial<BrowserConfig>): ClientWorld => {
    const network = new NetworkGuard(rules, new ActionPasses(Date.now, passwordSeal), protectedPorts);
    const downloadFolder = sessionId === processSession ? downloadsRoot : join(downloadsRoot, sessionId);
    const session = new BrowserSession({
      ...browserConfig(mode, options, log),
      ...sharing,
      network,
      // What tabs log and request is recorded only when a tool can read it.
      ...(categories.includes('devtools') ? { devtools: true } : {}),
      downloads: {
        folder: downloadFolder,
        maxBytes: (options.downloadMaxMb ?? 50) * 1024 * 1024,
        maxCount: options.downloadMaxCount ?? 100,
        afterActionMs: 5_000,
      },
    });
    const runner = new ToolRunner({
      tools: toolsFor(categories),
      context: {
        session,
        // A client's yes to typing a secret on a site is its own (the values are hidden from every client alike).
        secrets: sessionId === processSession ? secrets : secrets.forClient(),
        timeoutMs: options.timeout,
        // The agent's save_recipe: this client's session, from the log it writes, into the home's recipes folder.
        saveRecipe: (name) => saveSessionRecipe(auditPath, join(ensureHome(log), 'recipes'), sessionId, name),
        ownFiles: {
          private: [ensureHome(log), auditPath, downloadsRoot, ...(options.secrets ? [options.secrets] : [])],
          own: downloadFolder,
        },
      },
      network,
      rules,
      approver: consent?.approver() ?? noApprover,
      audit: sessionId === processSession ? audit : inSession(audit, sessionId),
      policy: options.policy,
      autoSwitch: options.mode === 'auto',
    });
    return {
      sessionId,
      session,
      network,
      runner,
      close: async () => {
        // The browser first: a tab of it on the approval page holds a connection that keeps the page's server
        // from closing. Each step is bounded; a browser still there after its step is killed.
        await closeBrowserSession(session, log);
        // Calls the closing browser ended have recorded their end; any other still running is ended on the record.
        await runner.path.settle(2_000, 'tabward shut down before the call ended');
      },
    };
  };
  // Clients in the same user's Chrome: each lists and acts in its own tabs and the user's, never another client's.
  const clientTabs = new ClientTabs();
  const profileTaint = new SharedProfileTaint();
  const own = makeWorld(processSession, options.shareContext ? { sharedContext: true } : {});
  // Isolated clients share one browser process, each in a context of its own; made on the first client.
  let sharedBrowser: SharedIsolatedBrowser | undefined;
  const clients = new Set<ClientWorld>();
  let clientCount = 0;
  const clientsBrowser = () => {
    if (mode === 'isolated')
      sharedBrowser ??= new SharedIsolatedBrowser({
        ...browserConfig(mode, options, log),
        network: own.network,
      });
    return sharedBrowser;
  };
  const openClient = (): ClientWorld => {
    const shared = clientsBrowser();
    const world = makeWorld(`${processSession}-${++clientCount}`, {
      clientTabs,
      profileTaint,
      ...(shared ? { sharedBrowser: shared } : {}),
    });
    let closing: Promise<void> | undefined;
    const ours: ClientWorld = {
      ...world,
      close: () => {
        closing ??= world.close().finally(() => clients.delete(ours));
        return closing;
      },
    };
    clients.add(ours);
    return ours;
  };
  // What the inbox itself decides (an answer ignored because its call is gone, a question expired) is audited.
  if (consent)
    consent.record = (line) =>
      own.runner.path.recordEvent({
        tool: '(approval)',
        kind: 'approval',
        frontEnd: 'human',
        args: {},
        mode: own.session.mode,
        decision: 'block',
        reason: line,
        outcome: 'blocked',
        durationMs: 0,
      });
  return {
    ...own,
    consent,
    auditPath,
    openClient,
    get clients() {
      return clients.size;
    },
    warmUpClients: () => {
      const shared = options.headless ? clientsBrowser() : undefined;
      shared?.warmUp();
      return shared !== undefined;
    },
    close: async () => {
      await Promise.all([...clients].map((world) => world.close()));
      if (sharedBrowser) {
        const { pid, profile } = sharedBrowser.status();
        if (!(await boundedStep('closing the shared browser', sharedBrowser.close(), log)))
          killLaunchedBrowser(pid, profile, log);
      }
      await own.close();
      await boundedStep('stopping the approval inbox', consent?.stop() ?? Promise.resolve(), log);
    },
  };
}

/** The same log, each record under `session` (one client's calls, saved as one recipe). */
function inSession(audit: AuditSink, session: string): AuditSink {
  return { record: (entry) => audit.record({ ...entry, session }) };
}
