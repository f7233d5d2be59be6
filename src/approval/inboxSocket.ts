// The inbox as the user's terminal reaches it (docs/architecture.md "Consent"): each running tabward serves its
// open questions on a Unix socket in the home's run/ folder (0700; the socket 0600), which `tabward approvals`
// lists and answers. No TCP port: the agent's browser, which only speaks TCP through the choke point, cannot
// reach it, and nothing about it is printed.

import { chmodSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { join } from 'node:path';
import { questionLines } from '../core/approvalDisplay.ts';
import { choiceFrom, decisionNames } from './answerChoice.ts';
import type { ApprovalInbox, Question } from './inbox.ts';

/** One open question as `tabward approvals` shows it (and `--json` prints it). */
export interface QuestionView {
  readonly id: string;
  /** The tabward process asking. */
  readonly process: number;
  readonly tool: string;
  readonly page: string;
  /** The question in the words every channel uses. */
  readonly question: string;
  readonly askedAt: string;
  readonly sensitive: boolean;
  /** Answers beyond approve/reject/skip this question offers. */
  readonly offers: readonly string[];
  /** The approval page for this question alone, when the page runs. */
  readonly pageUrl?: string;
}

const socketPrefix = 'approvals-';

export function runDirOf(home: string): string {
  return join(home, 'run');
}

export function viewOf(question: Question, pageUrl: string | undefined): QuestionView {
  const request = question.request;
  return {
    id: question.id,
    process: process.pid,
    tool: request.tool,
    page: request.url,
    question: questionLines(request).join('\n'),
    askedAt: new Date(question.askedAt).toISOString(),
    sensitive: request.sensitive,
    offers: [
      ...(request.approveAllAllowed ? ['approve-all'] : []),
      ...(request.siteGrant ? ['site-grant'] : []),
      ...(request.siteGrantsInForce?.length ? ['revoke-site-grants'] : []),
    ],
    ...(pageUrl ? { pageUrl } : {}),
  };
}

export interface InboxSocket {
  readonly path: string;
  close(): Promise<void>;
}

/** Serves `inbox` on run/approvals-PID.sock under `home`. */
export async function serveInboxSocket(
  inbox: ApprovalInbox,
  home: string,
  pageUrlOf: (question: Question) => string | undefined,
  /** The approval page's port (diagnostics: it is tabward's own, which the agent's browser is refused). */
  pagePort: () => number | undefined = () => undefined,
): Promise<InboxSocket> {
  const dir = runDirOf(home);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const path = join(dir, `${socketPrefix}${process.pid}.sock`);
  // Bound under a name `tabward approvals` does not list, then renamed once it listens: a socket file exists from
  // bind() on but refuses connections until listen(), and a loaded machine ran a reader in between (CI: "connect
  // ECONNREFUSED"). The name is shorter than the final one, so it fits the socket path limit whenever that does.
  const binding = join(dir, `.a-${process.pid}.sock`);
  rmSync(path, { force: true });
  rmSync(binding, { force: true });
  const server = createServer(async (req, res) => {
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && req.url === '/questions')
      return reply(
        200,
        inbox.list().map((question) => viewOf(question, pageUrlOf(question))),
      );
    if (req.method === 'GET' && req.url === '/status')
      return reply(200, {
        process: process.pid,
        openQuestions: inbox.list().length,
        pagePort: pagePort() ?? null,
      });
    if (req.method === 'POST' && req.url === '/answer') {
      const body = (await readJson(req)) as { id?: unknown; decision?: unknown } | undefined;
      const question = typeof body?.id === 'string' ? inbox.get(body.id) : undefined;
      const by = 'tabward approvals';
      if (!question) {
        const said = (body?.decision as { choice?: unknown } | undefined)?.choice;
        return reply(404, { error: inbox.refuseLate(String(body?.id), String(said), by) });
      }
      const choice = choiceFrom(body?.decision, question.request);
      if (!choice) return reply(400, { error: `decision must be ${decisionNames}` });
      const result = inbox.answer(question.id, choice, by);
      return result.ok ? reply(200, { ok: true }) : reply(409, { error: result.why });
    }
    reply(404, { error: 'no such route' });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(binding, () => resolve());
  });
  chmodSync(binding, 0o600);
  renameSync(binding, path);
  return {
    path,
    close: () => closeServer(server, path),
  };
}

async function closeServer(server: Server, path: string): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(path, { force: true });
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of req) {
    text += String(chunk);
    if (text.length > 100_000) return undefined;
  }
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The sockets of the tabward processes of this home that are still running (stale ones are removed). */
export function listInboxSockets(home: string): { readonly process: number; readonly path: string }[] {
  const dir = runDirOf(home);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const found = [];
  for (const name of names) {
    const match = /^approvals-(\d+)\.sock$/.exec(name);
    if (!match) continue;
    const pid = Number(match[1]);
    const path = join(dir, name);
    if (alive(pid)) found.push({ process: pid, path });
    else rmSync(path, { force: true });
  }
  return found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** One request to an inbox socket, with a deadline. */
export function socketRequest(
  path: string,
  method: 'GET' | 'POST',
  route: string,
  body?: unknown,
  timeoutMs = 5_000,
): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { socketPath: path, method, path: route, headers: { 'content-type': 'application/json' } },
      async (res) => {
        try {
          resolve({ status: res.statusCode ?? 0, body: await readJson(res) });
        } catch (error) {
          reject(error);
        }
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer from ${path} within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}
