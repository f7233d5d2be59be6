// The HTTP side of runs kept on a queue (`serve --redis`): `POST /run` adds a job and waits for it as a direct run
// would (Webhands' clients read the same answer), or answers 202 with its id when the client asks
// (`Prefer: respond-async`, or `"async": true` in the body) or the run outlasts the wait; `GET /runs/:id` shows its
// state, step log and result; `DELETE /runs/:id` cancels it. An `Idempotency-Key` header names one run: sent again,
// it is the same run, never a second one.

import type { Context, Hono } from 'hono';
import { isTabwardError } from '../core/errors.ts';
import type { QueuedRequest, QueuedRuns, RunRecord } from './queuedRuns.ts';
import type { Recipe } from './recipeSchema.ts';
import { serveResponse, statusOf } from './serveResponse.ts';

/** The client asked for an id now rather than the result later. */
export function wantsAsync(prefer: string | undefined, body: Record<string, unknown>): boolean {
  return body.async === true || /\brespond-async\b/i.test(prefer ?? '');
}

/** A run's record as the API shows it: the result in the same shape `POST /run` answers with. */
function shown(record: RunRecord): Record<string, unknown> {
  const { result, ...rest } = record;
  return { ...rest, status: `/runs/${record.id}`, ...(result ? { result: serveResponse(result) } : {}) };
}

export async function answerQueued(
  c: Context,
  queued: { readonly runs: QueuedRuns; readonly waitMs: number },
  recipe: Recipe,
  request: QueuedRequest,
  how: { idempotencyKey: string | undefined; async: boolean },
): Promise<Response> {
  const key = how.idempotencyKey?.trim();
  if (key !== undefined && (key.length === 0 || key.length > 200))
    return c.json({ error: 'The Idempotency-Key header must have 1 to 200 characters.' }, 400);
  let added: { id: string; existing: boolean };
  try {
    added = await queued.runs.submit(
      recipe,
      { confirm: request.confirm, screenshot: request.screenshot },
      key,
    );
  } catch (error) {
    if (isTabwardError(error) && error.code === 'bad_input') return c.json({ error: error.describe() }, 422);
    return c.json(
      { error: `The run could not be queued: ${String(isTabwardError(error) ? error.describe() : error)}` },
      503,
    );
  }
  c.header('location', `/runs/${added.id}`);
  c.header('x-tabward-run', added.id);
  return followQueued(c, queued, added.id, how.async).catch((error: unknown) =>
    c.json(
      {
        error: `Run ${added.id} is queued, but the queue stopped answering (${isTabwardError(error) ? error.message : String(error)}); ask GET /runs/${added.id} later.`,
        id: added.id,
      },
      503,
    ),
  );
}

/** The answer once a run is queued: its record now (async), or its result once it ended. */
async function followQueued(
  c: Context,
  queued: { readonly runs: QueuedRuns; readonly waitMs: number },
  id: string,
  async: boolean,
): Promise<Response> {
  const added = { id };
  if (async) {
    const record = await queued.runs.get(added.id);
    return c.json(
      record ? shown(record) : { id: added.id, state: 'queued', status: `/runs/${added.id}` },
      202,
    );
  }
  const record = await queued.runs.wait(added.id, queued.waitMs);
  if (!record) return c.json({ error: `Run ${added.id} is gone (its result outlived its TTL).` }, 404);
  if (record.result)
    return c.json({ ...serveResponse(record.result), runId: record.id }, statusOf(record.result));
  if (record.state === 'queued' || record.state === 'running') return c.json(shown(record), 202);
  // Ended outside the run itself: its worker died mid-run (a confirmed run: outcome unknown), or it was cancelled.
  const status = record.state === 'unknown' ? 502 : record.state === 'cancelled' ? 409 : 502;
  return c.json(
    { ok: false, error: record.reason ?? record.state, errorCode: record.state, runId: record.id },
    status,
  );
}

/** GET and DELETE /runs/:id; without a queue they say how to get one. */
export function addRunRoutes(
  app: Hono,
  runs: QueuedRuns | undefined,
  authorised: (c: Context) => boolean,
): void {
  const lookUp = async (c: Context, act: (id: string) => Promise<RunRecord | undefined>) => {
    if (!authorised(c))
      return c.json({ error: 'Missing or wrong bearer token (Authorization: Bearer <token>).' }, 401);
    if (!runs)
      return c.json(
        {
          error:
            'Runs are kept by id only with a queue: start serve with --redis redis://HOST:PORT and tabward worker.',
        },
        404,
      );
    const id = c.req.param('id') ?? '';
    if (!/^[kr][0-9a-f]{24,32}$/.test(id))
      return c.json({ error: `No run ${id}: run ids look like r0f3….` }, 404);
    const record = await act(id).catch(() => 'unreachable' as const);
    if (record === 'unreachable') return c.json({ error: 'The Redis queue cannot be reached.' }, 503);
    if (!record)
      return c.json({ error: `No run ${id} (never queued, or its result outlived its TTL).` }, 404);
    return c.json(shown(record), 200);
  };
  app.get('/runs/:id', (c) => lookUp(c, (id) => runs?.get(id) ?? Promise.resolve(undefined)));
  app.delete('/runs/:id', (c) => lookUp(c, (id) => runs?.cancel(id) ?? Promise.resolve(undefined)));
}
