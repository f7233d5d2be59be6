// The local approval page: a tiny web app on 127.0.0.1 with a random port and an unguessable token in its
// URL, showing pending approvals live. It is the approver when the MCP client cannot ask the human itself.
// A question leaves the page when it is answered, times out, or its call is withdrawn (cancelled, client gone);
// what the page shows is sanitised here and rendered with textContent there.

import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { approveAllNote, displayRequest, siteGrantLines, warningOf } from '../core/approvalDisplay.ts';
import type { ApprovalChoice, ApprovalRequest, Approver } from '../core/approvals.ts';
import { forDisplay } from '../core/displayText.ts';
import { approvalPageHtml } from './approvalPageHtml.ts';

const cancelled: ApprovalChoice = { choice: 'reject', reason: 'the call was cancelled' };

interface Pending {
  readonly request: ApprovalRequest;
  readonly resolve: (choice: ApprovalChoice) => void;
}

export interface ApprovalPageOptions {
  /** How long a request waits for a human before it is rejected. */
  readonly timeoutMs?: number;
  readonly notify?: (message: string) => void;
}

export class ApprovalPage implements Approver {
  readonly token = randomBytes(24).toString('base64url');
  private readonly pending = new Map<string, Pending>();
  private server: ReturnType<typeof serve> | undefined;
  private port = 0;

  constructor(private readonly options: ApprovalPageOptions = {}) {}

  get name(): string {
    return `page ${this.url}`;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/${this.token}/`;
  }

  async start(): Promise<string> {
    const app = this.app();
    await new Promise<void>((resolve) => {
      this.server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info: AddressInfo) => {
        this.port = info.port;
        resolve();
      });
    });
    return this.url;
  }

  async stop(): Promise<void> {
    for (const [id, entry] of this.pending) {
      entry.resolve({ choice: 'reject', reason: 'tabward is shutting down' });
      this.pending.delete(id);
    }
    const server = this.server;
    if (!server) return;
    // A browser's kept-alive or pre-connected socket would hold close() open forever.
    if ('closeAllConnections' in server) server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  ask(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalChoice> {
    if (signal?.aborted) return Promise.resolve(cancelled);
    const timeoutMs = this.options.timeoutMs ?? 5 * 60_000;
    this.options.notify?.(
      `tabward: approval needed for ${forDisplay(request.tool)} on ${forDisplay(request.origin || 'the browser')}: ${this.url}`,
    );
    return new Promise((resolve) => {
      // Whichever comes first (an answer, the timeout, the call withdrawn) settles it and removes the question.
      const settle = (choice: ApprovalChoice) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', withdraw);
        this.pending.delete(request.id);
        resolve(choice);
      };
      const withdraw = () => settle(cancelled);
      const timer = setTimeout(
        () =>
          settle({
            choice: 'reject',
            reason: `nobody answered on the approval page within ${Math.round(timeoutMs / 1000)} s`,
          }),
        timeoutMs,
      );
      signal?.addEventListener('abort', withdraw, { once: true });
      this.pending.set(request.id, { request, resolve: settle });
    });
  }

  /** Pending requests as the human may see them (page-chosen text sanitised), for the page and for tests. */
  list(): ApprovalRequest[] {
    return [...this.pending.values()].map((entry) => displayRequest(entry.request));
  }

  private app(): Hono {
    const app = new Hono();
    app.use('*', async (c, next) => {
      const host = c.req.header('host');
      if (host !== `127.0.0.1:${this.port}` && host !== `localhost:${this.port}`)
        return c.text('bad host', 403);
      if (!c.req.path.startsWith(`/${this.token}/`)) return c.text('not found', 404);
      // Only the page itself (or the human typing its address) may use it: a request another page makes, even
      // one that learned the token, carries a foreign Origin or Sec-Fetch-Site and is refused.
      const origin = c.req.header('origin');
      const site = c.req.header('sec-fetch-site');
      if (
        (origin !== undefined && origin !== `http://${host}`) ||
        (site && !['same-origin', 'none'].includes(site))
      )
        return c.text('cross-origin requests are refused', 403);
      await next();
      c.header('Cache-Control', 'no-store');
      c.header('X-Frame-Options', 'DENY');
    });
    app.get(`/${this.token}/`, (c) => c.html(approvalPageHtml));
    // Each with the note that says why approve-all is missing, when it is, and what a site grant would allow: the
    // page shows them under the buttons.
    app.get(`/${this.token}/pending`, (c) =>
      c.json(
        [...this.pending.values()].map((entry) => ({
          ...displayRequest(entry.request),
          approveAllNote: approveAllNote(entry.request) ?? null,
          warning: warningOf(entry.request) ?? null,
          siteGrantLines: siteGrantLines(entry.request),
        })),
      ),
    );
    app.post(`/${this.token}/decide`, async (c) => {
      if (!c.req.header('content-type')?.startsWith('application/json')) return c.text('JSON only', 415);
      const body = (await c.req.json().catch(() => undefined)) as
        | { id?: unknown; decision?: unknown }
        | undefined;
      const entry = typeof body?.id === 'string' ? this.pending.get(body.id) : undefined;
      if (!entry) return c.json({ error: 'no such pending approval (already answered or expired)' }, 404);
      const choice = toChoice(body?.decision, entry.request);
      if (!choice)
        return c.json(
          {
            error:
              'decision must be approve, approve-all, site-grant, revoke-site-grants, reject, skip or modify',
          },
          400,
        );
      this.pending.delete(entry.request.id);
      entry.resolve(choice);
      return c.json({ ok: true });
    });
    return app;
  }
}

function toChoice(raw: unknown, request: ApprovalRequest): ApprovalChoice | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const decision = raw as {
    choice?: unknown;
    reason?: unknown;
    scope?: unknown;
    args?: unknown;
    minutes?: unknown;
  };
  switch (decision.choice) {
    case 'approve':
    case 'skip':
      return { choice: decision.choice };
    case 'approve-all':
      // Never on sensitive pages: a stale or forged page cannot widen what the guard allows.
      return request.approveAllAllowed
        ? { choice: 'approve-all', scope: decision.scope === 'server' ? 'server' : 'tool' }
        : { choice: 'approve' };
    case 'site-grant':
      // Only where one was offered; the call path checks again before granting.
      return request.siteGrant
        ? { choice: 'site-grant', minutes: decision.minutes === 60 ? 60 : 15 }
        : { choice: 'approve' };
    case 'revoke-site-grants':
      return { choice: 'revoke-site-grants' };
    case 'reject':
      return typeof decision.reason === 'string' && decision.reason
        ? { choice: 'reject', reason: decision.reason }
        : { choice: 'reject' };
    case 'modify':
      return typeof decision.args === 'object' && decision.args !== null
        ? { choice: 'modify', args: decision.args as Record<string, unknown> }
        : undefined;
    default:
      return undefined;
  }
}
