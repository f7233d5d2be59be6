// What `tabward mcp` does once its flags are parsed: assemble the guarded browser and serve it over stdio or
// Streamable HTTP.

import { join } from 'node:path';
import { preloadBrowserLibrary } from '../browser/connect.ts';
import { visibleLines } from '../core/displayText.ts';
import { askedInSession, createMcpServer } from '../mcp/mcpServer.ts';
import { type StdioHandle, serveHttp, serveStdio } from '../mcp/transports.ts';
import { assembleGuardedBrowser } from './assemble.ts';
import { listenError } from './listenError.ts';
import type { McpFlags } from './mcpCommand.ts';
import { announceMcpToken, mcpHttpAuth, mcpHttpToken } from './mcpToken.ts';
import { packageRoot, version } from './packageRoot.ts';

export async function runMcp(flags: McpFlags): Promise<void> {
  // Lines here may quote what a page or a remote browser chose (an endpoint's error): shown as marks, never run.
  const log = (line: string) => process.stderr.write(`${visibleLines(line)}\n`);
  // Before anything starts: an empty or short TABWARD_MCP_TOKEN stops here, never serving without auth.
  const token = flags.http === undefined ? undefined : mcpHttpToken();
  const browser = await assembleGuardedBrowser(
    {
      ...flags,
      shareContext: flags.http !== undefined && flags.shareContext === true,
      headless: !flags.headed,
      consent:
        flags.approval === 'deny'
          ? false
          : {
              waitMs: flags.approvalWait * 1000,
              notify: flags.notify,
              humanVerified: flags.humanVerified === true,
            },
    },
    log,
  );
  let closing = false;
  // Loading Playwright, starting the approval page and an isolated headless browser take CPU the client's first
  // replies would wait for: they begin once the client has its tool list (or after a second, for a client that
  // never asks for it), while the model thinks.
  let warmedUp = false;
  const warmUp = () => {
    if (warmedUp || closing) return;
    warmedUp = true;
    // A browser warmed up is spawned before the library loads (it boots meanwhile): only without one is the library
    // loaded here.
    const warming = flags.warmUp && (perClient ? browser.warmUpClients() : browser.session.warmUp());
    if (!warming) preloadBrowserLibrary();
    setImmediate(
      () =>
        void browser.consent
          ?.start()
          .catch((error: unknown) => log(`tabward: the approval inbox could not start: ${String(error)}`)),
    );
  };
  const serverFor = (runner: typeof browser.runner, onToolsListed: () => void, clientSession?: string) =>
    createMcpServer({
      onToolsListed,
      ...(clientSession ? { clientSession } : {}),
      runner,
      approval: flags.approval,
      ...(browser.consent ? { consent: browser.consent } : {}),
      consentTiming: { humanMs: flags.approvalHumanMs, elicitMs: 5 * 60_000 },
      version,
    });
  // Over HTTP each session is a client with a world of its own (context, tabs, taint, grants), closed with its
  // session; --share-context gives every session the process's one world instead.
  const perClient = flags.http !== undefined && !flags.shareContext;
  /** A session's questions go with it: one left waiting for the same call again took a yes nothing would act on. */
  const withdrawOnClose = (server: ReturnType<typeof serverFor>, session: string, then?: () => void) => {
    server.onclose = () => {
      browser.consent?.inbox.withdrawWhere(
        (request) => askedInSession(request, session),
        'its client ended its session',
      );
      then?.();
    };
    return server;
  };
  let sharingSessions = 0;
  const makeServer = () => {
    if (flags.http === undefined) return serverFor(browser.runner, warmUp);
    if (!perClient) {
      // --share-context: one world for every session, but each session's questions still say which one asks (a
      // client cannot name itself into another's) and go with it (an attack review found neither).
      const session = `${browser.sessionId}-shared-${++sharingSessions}`;
      return withdrawOnClose(serverFor(browser.runner, warmUp, session), session);
    }
    const world = browser.openClient();
    // The shared browser warms up with the first client (warmUp); each client's context opens with its first call.
    return withdrawOnClose(serverFor(world.runner, warmUp, world.sessionId), world.sessionId, () => {
      void world.close();
    });
  };
  // A bug must not take the agent's browser down with it: say so, and keep serving.
  process.on('unhandledRejection', (error) =>
    log(`tabward: internal error (please report it): ${String(error)}`),
  );
  // A client that is gone took tabward's stderr pipe with it: a line logged then must not crash tabward (EPIPE).
  process.stderr.on('error', () => undefined);
  let stdio: StdioHandle | undefined;
  // SIGINT, SIGTERM, stdin closed, stdout broken: calls still running are cancelled, then the browser closes (a
  // start in flight included) and every call still open is ended on the audit record.
  const shutdown = async () => {
    if (closing) return;
    closing = true;
    await stdio?.close();
    await browser.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown());
  process.on('SIGTERM', () => void shutdown());
  process.on('SIGHUP', () => void shutdown());
  if (flags.http === undefined || token === undefined) {
    // Started by hand in a terminal: say what it waits for, once (a client's pipe is no terminal: nothing said).
    if (process.stdin.isTTY)
      log(
        `tabward mcp: an MCP server, waiting for a client on stdin. Add it to your client (claude mcp add tabward -- ${join(packageRoot, 'bin', 'tabward')} mcp; the README has the others) or try tabward demo. Ctrl-C quits.`,
      );
    stdio = await serveStdio(makeServer(), shutdown, log);
  } else {
    const port = flags.http;
    const served = await serveHttp(makeServer, port, mcpHttpAuth(token), '127.0.0.1', {
      maxSessions: flags.maxSessions,
      idleMs: flags.sessionIdle * 1000,
    }).catch((error: unknown) => {
      throw listenError(error, '--http', port);
    });
    // The agent's browser must never reach the server that takes the agent's own calls.
    browser.network.protectedPorts.add(Number(new URL(served.url).port));
    log(
      `tabward: MCP over Streamable HTTP at ${served.url} (${perClient ? `each session in a browser context of its own, up to ${flags.maxSessions}` : 'every session in one shared context (--share-context)'})`,
    );
    announceMcpToken(token, served.url, log);
  }
  setTimeout(warmUp, 1_000).unref();
}
