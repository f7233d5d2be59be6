// `tabward serve`: recipes over HTTP. POST /run {recipe, confirm?, dryRun?, screenshot?} (or a bare recipe)
// → the result, in a shape Webhands' clients read as theirs (serveResponse.ts).
// Bearer token (or Webhands' x-webhands-token header) required (16 characters at least), Host and Origin headers checked, JSON bodies only (a web
// page's form or text/plain post is refused before it is read), body size capped, a bounded number of
// concurrent runs with a bounded queue (a RunGate: tabward's own browser, or the endpoints of a browser grid), each
// run under its deadline. GET /health and GET /schema need no token. Nothing a run needs is kept between requests,
// so several serve processes can stand behind one load balancer (--allowed-host names it).

import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { isTabwardError, TabwardError } from '../core/errors.ts';
import { bearerMatches, checkLocalRequest, localHosts, sameSecret } from '../core/localRequest.ts';
import { parseRecipe } from './parseRecipe.ts';
import { refusePrivateTargets } from './privateAddress.ts';
import type { QueuedRuns } from './queuedRuns.ts';
import type { Recipe } from './recipeSchema.ts';
import { recipeJsonSchema } from './recipeSchema.ts';
import { isRefusal, type Refusal, type RunGate } from './runGate.ts';
import type { RecipeResult } from './runRecipe.ts';
import { addRunRoutes, answerQueued, wantsAsync } from './runRoutes.ts';
import { serveResponse, statusOf } from './serveResponse.ts';

export interface ServeOptions {
  /** Run recipes that reach private or loopback addresses (the bundled demo, tests). */
  readonly allowPrivate?: boolean;
  readonly port: number;
  readonly host: string;
  readonly token: string;
  /** Host headers to accept besides this server's own: the names a load balancer in front sends. */
  readonly allowedHosts?: readonly string[];
  readonly maxBodyBytes: number;
  /** Who may run now; `run` goes through it (a dry run needs no browser, and no slot). */
  readonly gate: Pick<RunGate<unknown>, 'running' | 'queued' | 'close' | 'idle' | 'health' | 'answer'>;
  readonly run: (
    recipe: Recipe,
    request: { confirm: boolean; dryRun: boolean; screenshot: boolean },
  ) => Promise<RecipeResult | Refusal>;
  /**
   * `serve --redis`: live runs are jobs on a queue other processes run (`tabward worker`); `POST /run` waits for
   * one as before, or answers 202 with its id; `GET /runs/:id` and `DELETE /runs/:id` read and cancel it.
   */
  readonly queued?: { readonly runs: QueuedRuns; readonly waitMs: number };
}

export interface RecipeServer {
  readonly url: string;
  /** Shutting down: new and queued runs get 503; says how many were running and queued. */
  stopTaking(): { running: number; dropped: number };
  /** Resolves once no run is running. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

export async function startRecipeServer(options: ServeOptions): Promise<RecipeServer> {
  if (options.token.trim().length < 16)
    throw new TabwardError('bad_input', 'The serve token must have at least 16 characters.');
  const { gate } = options;
  // Once shutting down, every run is turned away, a dry run (which takes no slot) included.
  let stopping = false;
  let allowedHosts: string[] = [];
  const app = new Hono();
  app.use('*', async (c, next) => {
    const verdict = checkLocalRequest(c.req.header('host'), c.req.header('origin'), allowedHosts);
    if (verdict === 'bad-host') return c.json({ error: 'Host header not allowed' }, 403);
    if (verdict === 'bad-origin')
      return c.json(
        { error: 'Requests from web pages (an Origin other than this server) are refused.' },
        403,
      );
    await next();
  });
  app.get('/health', async (c) => {
    if (!options.queued)
      return c.json({ ok: true, running: gate.running, queued: gate.queued, ...gate.health() });
    const counts = await options.queued.runs.counts().catch(() => undefined);
    return counts
      ? c.json({ ok: true, ...counts, queue: 'redis' })
      : c.json({ ok: false, error: 'the Redis queue cannot be reached' }, 503);
  });
  app.get('/schema', (c) => c.json(recipeJsonSchema()));
  addRunRoutes(app, options.queued?.runs, (c) =>
    tokenMatches(c.req.header('authorization'), c.req.header('x-webhands-token'), options.token),
  );
  app.post(
    '/run',
    bodyLimit({
      maxSize: options.maxBodyBytes,
      onError: (c) => c.json({ error: `Request body over ${options.maxBodyBytes} bytes.` }, 413),
    }),
    async (c) => {
      if (!tokenMatches(c.req.header('authorization'), c.req.header('x-webhands-token'), options.token)) {
        return c.json({ error: 'Missing or wrong bearer token (Authorization: Bearer <token>).' }, 401);
      }
      if (!isJson(c.req.header('content-type')))
        return c.json({ error: 'The body must be sent as Content-Type: application/json.' }, 415);
      const body = (await c.req.json().catch(() => undefined)) as Record<string, unknown> | undefined;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        return c.json(
          {
            error:
              'The body must be a JSON object: a recipe, or {"recipe": {...}, "confirm"?: true, "dryRun"?: true}.',
          },
          400,
        );
      }
      // A bare recipe (no {recipe} wrapper) is a run with the defaults: read-only, live, no screenshot.
      const wrapped = 'recipe' in body;
      let recipe: Recipe;
      try {
        recipe = parseRecipe(wrapped ? body.recipe : body, 'recipe');
        if (!options.allowPrivate) await refusePrivateTargets(recipe);
      } catch (error) {
        return c.json({ error: isTabwardError(error) ? error.describe() : String(error) }, 400);
      }
      const request = {
        confirm: wrapped && body.confirm === true,
        dryRun: wrapped && body.dryRun === true,
        screenshot: wrapped && body.screenshot === true,
      };
      if (options.queued && !request.dryRun && !stopping)
        return answerQueued(c, options.queued, recipe, request, {
          idempotencyKey: c.req.header('idempotency-key'),
          async: wantsAsync(c.req.header('prefer'), body),
        });
      const result = stopping ? 'closed' : await options.run(recipe, request);
      if (isRefusal(result)) {
        const answer = gate.answer(result);
        if (answer.retryAfterS !== undefined) c.header('retry-after', String(answer.retryAfterS));
        return c.json({ error: answer.message }, answer.status);
      }
      return c.json(serveResponse(result), statusOf(result));
    },
  );
  // A port in use or refused must reject here, for the command to say which flag to change.
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const started = serve({ fetch: app.fetch, hostname: options.host, port: options.port }, () =>
      resolve(started),
    );
    started.once('error', reject);
  });
  const port = (server.address() as AddressInfo).port;
  allowedHosts = [
    ...localHosts(options.host, port),
    ...(options.allowedHosts ?? []).map((host) => host.toLowerCase()),
  ];
  return {
    url: `http://${options.host}:${port}`,
    stopTaking: () => {
      stopping = true;
      return { running: gate.running, dropped: gate.close() };
    },
    idle: () => gate.idle(),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * `Authorization: Bearer <token>`, or the header Webhands' clients send. A custom header cannot come from a
 * page's simple request either, and the Origin check above still applies.
 */
function tokenMatches(
  authorization: string | undefined,
  webhands: string | undefined,
  token: string,
): boolean {
  if (webhands !== undefined) return sameSecret(webhands.trim(), token);
  return bearerMatches(authorization, token);
}

/** `application/json`, parameters allowed; a simple request (form, text/plain) is not. */
function isJson(contentType: string | undefined): boolean {
  return contentType?.split(';')[0]?.trim().toLowerCase() === 'application/json';
}
