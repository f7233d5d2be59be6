// Nothing is left running or lying around when a command is interrupted (issue 32, defects 2 and 9): `tabward run`
// on Ctrl-C prints a result saying it was cancelled and exits 130; `tabward demo` on Ctrl-C ends its "your Chrome"
// too; `tabward serve` stopping during a run answers 503 "the server is stopping" and exits within its grace. Each
// command runs with a TMPDIR of its own, so that every browser profile it makes is seen, and every Chromium it
// starts is found by that folder on its command line.

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { binPath } from '../helpers/mcpClient.ts';
import { startServe } from '../helpers/tabwardProcess.ts';
import { waitFor, within } from '../helpers/waitFor.ts';

let site: Fixture;
const hanging: (() => void)[] = [];
before(async () => {
  site = await startFixture({
    'GET /start': (_req, _body, res) => html(res, '<title>Start</title>Start'),
    // Never answers while the test runs: a step stays in flight until it is cut.
    'GET /slow': (_req, _body, res) => {
      hanging.push(() => res.destroy());
    },
  });
});
after(async () => {
  for (const end of hanging) end();
  await site?.close();
});

/** A fresh TMPDIR, a home in it, and what is left there (and running from it) afterwards. */
function sandbox() {
  const dir = mkdtempSync(join(tmpdir(), 'tabward-interrupt-'));
  const tmp = join(dir, 'tmp');
  const home = join(dir, 'home');
  for (const path of [tmp, home]) mkdirSync(path, { recursive: true });
  return {
    dir,
    env: { ...process.env, TMPDIR: tmp, TABWARD_HOME: home },
    leftovers: () => readdirSync(tmp).filter((name) => name.startsWith('tabward-')),
    browsersAlive: () => chromiumsUsing(tmp),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Processes whose command line names a folder under `tmp` (a Chromium on a profile made there). */
function chromiumsUsing(tmp: string): number[] {
  const found: number[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(tmp)) found.push(Number(pid));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
}

test('tabward run: Ctrl-C mid-step prints a cancelled result, exits 130, leaves no browser or profile', async () => {
  const box = sandbox();
  try {
    const recipe = join(box.dir, 'slow.json');
    writeFileSync(
      recipe,
      JSON.stringify({
        url: site.url('127.0.0.1', '/start'),
        steps: [{ action: 'goto', url: site.url('127.0.0.1', '/slow') }],
        extract: { fields: { title: 'title' } },
      }),
    );
    const run = spawn(process.execPath, [binPath, 'run', recipe], { env: box.env });
    let stdout = '';
    let stderr = '';
    run.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    run.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const seenBefore = hanging.length;
    await waitFor('the run to reach the slow step', () => hanging.length > seenBefore);
    assert.ok(box.browsersAlive().length > 0, 'a browser runs on the sandbox profile');
    run.kill('SIGINT');
    assert.equal(await within('run to exit', exitOf(run)), 130, stderr);
    const result = JSON.parse(stdout) as {
      ok: boolean;
      error: { code: string; message: string; step: number };
    };
    assert.equal(result.ok, false);
    assert.equal(result.error.code, 'cancelled');
    assert.match(result.error.message, /^The run was cancelled \(Ctrl-C\) during steps\[0\]/);
    assert.match(stderr, /Ctrl-C: cancelling the run/);
    assert.deepEqual(box.browsersAlive(), []);
    assert.deepEqual(box.leftovers(), []);
  } finally {
    box.remove();
  }
});

test("tabward demo: Ctrl-C while it runs ends its browsers (the demo's own Chrome too) and removes their folders", async () => {
  const box = sandbox();
  try {
    const demo = spawn(process.execPath, [binPath, 'demo'], { env: box.env });
    demo.stdout?.resume();
    demo.stderr?.resume();
    await waitFor('the demo to start "your Chrome"', () =>
      box.leftovers().some((name) => name.startsWith('tabward-your-chrome-')),
    );
    await waitFor('its browser to run', () => box.browsersAlive().length > 0);
    demo.kill('SIGINT');
    const code = await within('demo to exit', exitOf(demo));
    assert.notEqual(code, null);
    // The demo's own `tabward mcp` child ends when its stdin closes, on its own clock: on a loaded machine that
    // takes a while, hence the long wait (what is left is named if it never goes).
    await waitFor('every browser of the demo to be gone', () => box.browsersAlive().length === 0, {
      timeoutMs: 30_000,
    });
    await waitFor('its folders to be gone', () => box.leftovers().length === 0, { timeoutMs: 30_000 }).catch(
      (error: unknown) => {
        throw new Error(`${String(error)}: left ${box.leftovers().join(', ')}`);
      },
    );
  } finally {
    box.remove();
  }
});

test('tabward serve: stopping during a run answers 503 "the server is stopping" and exits within its grace', async () => {
  const box = sandbox();
  const token = 'interrupt-token-0123456789';
  try {
    const serve = await startServe(token, ['--allow-private', '--grace', '1000'], {
      home: box.env.TABWARD_HOME ?? '',
      env: box.env,
    });
    const { base, child: server } = serve;
    const seenBefore = hanging.length;
    const answer = fetch(`${base}/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        url: site.url('127.0.0.1', '/start'),
        steps: [{ action: 'goto', url: site.url('127.0.0.1', '/slow') }],
        extract: { fields: { title: 'title' } },
      }),
    });
    await waitFor('the run to reach the slow step', () => hanging.length > seenBefore);
    const stopped = Date.now();
    server.kill('SIGTERM');
    const response = await within('the run to be answered', answer);
    assert.equal(response.status, 503);
    const body = (await response.json()) as { error: string; errorCode: string };
    assert.equal(body.errorCode, 'cancelled');
    assert.match(body.error, /cancelled \(the server is stopping\)/);
    assert.doesNotMatch(body.error, /list_pages/);
    assert.equal(await within('serve to exit', exitOf(server)), 0);
    const took = Date.now() - stopped;
    assert.ok(took < 10_000, `serve took ${took} ms to exit (grace 1 s)`);
    assert.deepEqual(box.browsersAlive(), []);
    assert.deepEqual(box.leftovers(), []);
  } finally {
    box.remove();
  }
});
