// The approval page: a tiny web app on 127.0.0.1 (random port), one address per question with its own
// unguessable token (docs/architecture.md "Consent"). It is a view of the process's inbox: the address reaches the
// human through URL elicitation, `tabward approvals` and the notification, never stderr; it dies with its question.
// The agent's browser cannot load it (tabward's own ports are refused at the choke point), nor can another page
// (Origin and Sec-Fetch-Site checks). What the page shows is sanitised here and rendered with textContent there.

import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import {
  approveAllNote,
  argsFlag,
  displayRequest,
  siteGrantLines,
  warningOf,
  whereLines,
} from '../core/approvalDisplay.ts';
import { choiceFrom, decisionNames } from './answerChoice.ts';
import { approvalPageHtml } from './approvalPageHtml.ts';
import type { ApprovalInbox, Question } from './inbox.ts';

const approving = new Set(['approve', 'approve-all', 'site-grant', 'modify']);

export class ApprovalPage {
  private server: ReturnType<typeof serve> | undefined;
  private port = 0;
  /** token -> question id, and back: a question's address is made once, when first needed. */
  private readonly tokens = new Map<string, string>();
  private readonly tokenOf = new Map<string, string>();
  /** The one challenge each question's page may answer with a passkey (single use). */
  private readonly challenges = new Map<string, string>();

  constructor(
    private readonly inbox: ApprovalInbox,
    /**
     * Told each token as it is made (a secret the redactor must hide from everything the agent reads) and as it
     * dies with its question (no longer worth hiding: the page answers 404).
     */
    private readonly tokenEvents: { made(token: string): void; gone(token: string): void } = {
      made: () => undefined,
      gone: () => undefined,
    },
    /** The home whose enrolled passkeys verify a person's presence (questions that need it). */
    private readonly passkeyHome?: string,
  ) {
    // A question's token dies with it.
    inbox.onChange(() => {
      for (const [token, id] of this.tokens)
        if (!inbox.get(id)) {
          this.tokens.delete(token);
          this.tokenOf.delete(id);
          this.challenges.delete(token);
          this.tokenEvents.gone(token);
        }
    });
  }

  /** The port, once started: tabward's own, which the agent's browser is refused. */
  get listeningPort(): number {
    return this.port;
  }

  async start(): Promise<void> {
    if (this.server) return;
    const app = this.app();
    await new Promise<void>((resolve) => {
      this.server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info: AddressInfo) => {
        this.port = info.port;
        resolve();
      });
    });
  }

  /** The page of this one question (undefined before start or once the question is gone). */
  urlFor(question: Question): string | undefined {
    if (!this.port || !this.inbox.get(question.id)) return undefined;
    let token = this.tokenOf.get(question.id);
    if (!token) {
      token = randomBytes(24).toString('base64url');
      this.tokenEvents.made(token);
      this.tokens.set(token, question.id);
      this.tokenOf.set(question.id, token);
    }
    return `http://localhost:${this.port}/q/${token}/`;
  }

  /** Checks a passkey assertion against this page's one challenge (spent whatever the outcome). */
  private async presence(
    token: string,
    assertion: unknown,
  ): Promise<{ ok: true } | { ok: false; why: string }> {
    const challenge = this.challenges.get(token);
    this.challenges.delete(token);
    if (!this.passkeyHome) return { ok: false, why: 'no passkey is enrolled (tabward approvals enroll)' };
    if (!challenge) return { ok: false, why: 'ask for a challenge first: approve with your passkey' };
    if (typeof assertion !== 'object' || assertion === null)
      return { ok: false, why: 'this question needs your passkey (a human-verified approval)' };
    const { verifyPresence } = await import('./passkeys.ts');
    return verifyPresence(
      this.passkeyHome,
      assertion as Parameters<typeof verifyPresence>[1],
      challenge,
      `http://localhost:${this.port}`,
    );
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    // A browser's kept-alive or pre-connected socket would hold close() open forever.
    if ('closeAllConnections' in server) server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private app(): Hono {
    const app = new Hono();
    app.use('*', async (c, next) => {
      const host = c.req.header('host');
      if (host !== `127.0.0.1:${this.port}` && host !== `localhost:${this.port}`)
        return c.text('bad host', 403);
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
      c.header('Referrer-Policy', 'no-referrer');
    });
    const questionOf = (token: string) => {
      const id = this.tokens.get(token);
      return id === undefined ? undefined : this.inbox.get(id);
    };
    app.get('/q/:token/', (c) =>
      questionOf(c.req.param('token')) ? c.html(approvalPageHtml) : c.text('not found', 404),
    );
    // The page polls this: its one question while unanswered, then nothing (the page says it was answered).
    app.get('/q/:token/pending', (c) => {
      const question = questionOf(c.req.param('token'));
      if (!question) return c.text('not found', 404);
      if (question.answer) return c.json([]);
      const request = question.request;
      return c.json([
        {
          ...displayRequest(request),
          id: question.id,
          needsPresence: question.needsPresence,
          approveAllNote: approveAllNote(request) ?? null,
          warning: warningOf(request) ?? null,
          siteGrantLines: siteGrantLines(request),
          // The lines every channel shows of where the action goes (Sends, Drops onto, each value's field).
          where: whereLines(request),
          argsFlag: argsFlag(request) ?? null,
        },
      ]);
    });
    // A question that needs a person's presence: a fresh challenge for the passkey, one per page at a time.
    app.get('/q/:token/challenge', async (c) => {
      const token = c.req.param('token');
      const question = questionOf(token);
      if (!question?.needsPresence || !this.passkeyHome) return c.text('not found', 404);
      const { assertionOptions } = await import('./passkeys.ts');
      const options = await assertionOptions(this.passkeyHome);
      this.challenges.set(token, options.challenge);
      return c.json(options);
    });
    app.post('/q/:token/decide', async (c) => {
      if (!c.req.header('content-type')?.startsWith('application/json')) return c.text('JSON only', 415);
      const token = c.req.param('token');
      const question = questionOf(token);
      if (!question) return c.json({ error: 'no such question (already answered or gone)' }, 404);
      const body = (await c.req.json().catch(() => undefined)) as
        | { decision?: unknown; assertion?: unknown }
        | undefined;
      const choice = choiceFrom(body?.decision, question.request);
      if (!choice) return c.json({ error: `decision must be ${decisionNames}` }, 400);
      let present = false;
      if (question.needsPresence && approving.has(choice.choice)) {
        const proof = await this.presence(token, body?.assertion);
        if (!proof.ok) return c.json({ error: `not approved: ${proof.why}` }, 403);
        present = true;
      }
      const result = this.inbox.answer(question.id, choice, 'the approval page', { present });
      return result.ok ? c.json({ ok: true }) : c.json({ error: result.why }, 409);
    });
    return app;
  }
}
