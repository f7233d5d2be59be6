// Recipe errors a user can act on: JSON errors with line and column, a dry run that checks the secrets a live
// run would need, POST /run with a bare recipe, and serve stopping on SIGTERM in so many words.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { binPath } from '../helpers/mcpClient.ts';
import { runCli } from '../helpers/runCli.ts';

const work = mkdtempSync(join(tmpdir(), 'tabward-recipe-errors-'));
const env = { TABWARD_HOME: join(work, 'home') };
after(() => rmSync(work, { recursive: true, force: true }));

test('a recipe that is not JSON is refused with its line and column', async () => {
  const file = join(work, 'bad.json');
  writeFileSync(
    file,
    '{\n  "url": "https://example.com/",\n  "steps": [\n    {"action": "click", "selector": "#a"}\n    {"action": "click", "selector": "#b"}\n  ]\n}\n',
  );
  const outcome = await runCli(['run', file, '--dry-run'], env);
  assert.equal(outcome.code, 2);
  assert.match(
    outcome.stderr,
    /^tabward: \S+bad\.json:5:5 is not valid JSON: Expected ',' or '\]' after array element\. Check for a missing comma/,
  );
});

test('a dry run refuses a secret that is not declared', async () => {
  const file = join(work, 'login.json');
  writeFileSync(
    file,
    JSON.stringify({
      url: 'https://example.com/',
      steps: [{ action: 'type', selector: '#p', secret: 'VENDOR_PASSWORD' }],
    }),
  );
  const outcome = await runCli(['run', file, '--dry-run'], env);
  assert.equal(outcome.code, 2, outcome.stdout);
  assert.equal(outcome.json.ok, false);
  assert.match(outcome.json.error.message, /Unknown secret "VENDOR_PASSWORD"/);
  const secrets = join(work, 'ok.env');
  writeFileSync(secrets, 'VENDOR_PASSWORD=hunter2hunter2\n', { mode: 0o600 });
  const declared = await runCli(['run', file, '--dry-run', '--secrets', secrets], env);
  assert.equal(declared.code, 0, declared.stdout);
});

test('serve takes a bare recipe, and says how it stops on SIGTERM', async () => {
  const token = 't'.repeat(32);
  const server = spawn(process.execPath, [binPath, 'serve', '--port', '0', '--token', token], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  server.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(stderr)), 60_000);
    server.stderr?.on('data', () => {
      const url = /serving recipes at (http:\/\/\S+)/.exec(stderr)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve(url);
      }
    });
  });
  const post = (body: unknown) =>
    fetch(`${base}/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  // Read as a recipe (its step is judged), not refused as "not the {recipe} wrapper".
  const bare = await post({ url: 'https://example.com/', steps: [{ action: 'dance' }] });
  assert.equal(bare.status, 400);
  assert.match(
    ((await bare.json()) as { error: string }).error,
    /steps\[0\]\.action: unknown action "dance"/,
  );
  const notObject = await post([1, 2]);
  assert.match(
    ((await notObject.json()) as { error: string }).error,
    /must be a JSON object: a recipe, or \{"recipe"/,
  );
  const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
  server.kill('SIGTERM');
  assert.equal(await exited, 0);
  assert.match(
    stderr,
    /tabward: stopping: no new runs; 0 queued refused; 0 running get up to 10000 ms to finish\./,
  );
  assert.match(stderr, /tabward: stopped\./);
});
