// `tabward serve`: recipes over HTTP. POST /run {recipe, confirm?, dryRun?, screenshot?} → the result.
// Bearer token required, Host header checked, body size capped, a bounded number of concurrent runs with a
// bounded queue, each run under its deadline. GET /health and GET /schema need no token.

import { timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { isTabwardError } from '../core/errors.ts';
import { parseRecipe } from './parseRecipe.ts';
import type { Recipe } from './recipeSchema.ts';
import { recipeJsonSchema } from './recipeSchema.ts';
import type { RecipeResult } from './runRecipe.ts';
import { Slots } from './slots.ts';

export interface ServeOptions {
  readonly port: number;
  readonly host: string;
  readonly token: string;
  readonly concurrency: number;
  readonly queue: number;
  readonly maxBodyBytes: number;
  readonly run: (
    recipe: Recipe,
    request: { confirm: boolean; dryRun: boolean; screenshot: boolean },
  ) => Promise<RecipeResult>;
}

export interface RecipeServer {
  readonly url: string;
  close(): Promise<void>;
}

export async function startRecipeServer(options: ServeOptions): Promise<RecipeServer> {
  const slots = new Slots(options.concurrency, options.queue);
  let allowedHosts: string[] = [];
  const app = new Hono();
  app.use('*', async (c, next) => {
    if (!allowedHosts.includes(c.req.header('host') ?? ''))
      return c.json({ error: 'Host header not allowed' }, 403);
    await next();
  });
  app.get('/health', (c) =>
    c.json({ ok: true, running: slots.running, queued: slots.queued, concurrency: options.concurrency }),
  );
  app.get('/schema', (c) => c.json(recipeJsonSchema()));
  app.post(
    '/run',
    bodyLimit({
      maxSize: options.maxBodyBytes,
      onError: (c) => c.json({ error: `Request body over ${options.maxBodyBytes} bytes.` }, 413),
    }),
    async (c) => {
      if (!authorized(c.req.header('authorization'), options.token)) {
        return c.json({ error: 'Missing or wrong bearer token (Authorization: Bearer <token>).' }, 401);
      }
      const body = (await c.req.json().catch(() => undefined)) as Record<string, unknown> | undefined;
      if (typeof body !== 'object' || body === null || !('recipe' in body)) {
        return c.json(
          { error: 'The body must be JSON: {"recipe": {...}, "confirm"?: true, "dryRun"?: true}.' },
          400,
        );
      }
      let recipe: Recipe;
      try {
        recipe = parseRecipe(body.recipe, 'recipe');
      } catch (error) {
        return c.json({ error: isTabwardError(error) ? error.describe() : String(error) }, 400);
      }
      const request = {
        confirm: body.confirm === true,
        dryRun: body.dryRun === true,
        screenshot: body.screenshot === true,
      };
      const result = await slots.run(() => options.run(recipe, request));
      if (result === 'full')
        return c.json(
          { error: `Busy: ${options.concurrency} runs and ${options.queue} queued. Retry later.` },
          429,
        );
      return c.json(result, statusOf(result));
    },
  );
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const started = serve({ fetch: app.fetch, hostname: options.host, port: options.port }, () =>
      resolve(started),
    );
  });
  const port = (server.address() as AddressInfo).port;
  allowedHosts = [`${options.host}:${port}`, `localhost:${port}`, `127.0.0.1:${port}`];
  return {
    url: `http://${options.host}:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function authorized(header: string | undefined, token: string): boolean {
  const given = Buffer.from(header?.startsWith('Bearer ') ? header.slice(7) : '');
  const wanted = Buffer.from(token);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

function statusOf(result: RecipeResult): 200 | 403 | 422 | 504 | 502 {
  if (result.ok) return 200;
  if (result.error?.code === 'not_allowed') return 403;
  if (result.error?.code === 'timeout') return 504;
  if (result.error?.code === 'bad_input') return 422;
  return 502;
}
