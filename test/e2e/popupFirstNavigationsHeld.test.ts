// No popup's first navigation escapes the browser-wide document pause (browser/popupDocuments.ts), found holding
// by an attack review of the narrow hooks: on plain http, where the choke point cannot tell a navigation from a plain GET (no Sec-Fetch-Mode), so that any
// top-level navigation into a sensitive page that reaches it untied goes through. Each variant is opened by the
// page itself (a click's transient activation, spent after the action returned), with the human refusing all.
// Assertions on what the fixture server received.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { refOf } from '../helpers/mcpClient.ts';
import { waitFor } from '../helpers/waitFor.ts';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('popups the page opens itself, past the document pause', () => {
  let site: Fixture;
  let tw: InProcessBrowser;
  let mcp: InProcessMcp;
  const sensitiveHits = (marker: string) =>
    site.seen.filter((request) => request.host.startsWith('vault.example:') && request.path.includes(marker));
  const vault = (marker: string) => site.url('vault.example', `/settings/revoke?all=1&m=${marker}`);

  // Each variant: a button whose click (the agent's action) makes the page open a popup, now or later.
  const variants: Record<string, (marker: string) => string> = {
    late: (m) => `setTimeout(() => window.open(${JSON.stringify(vault(m))}), 1500)`,
    lateNoopener: (m) =>
      `setTimeout(() => window.open(${JSON.stringify(vault(m))}, '_blank', 'noopener'), 1500)`,
    blankThenNavigate: (m) => `const w = window.open(''); w.location = ${JSON.stringify(vault(m))};`,
    blankThenNavigateLater: (m) =>
      `const w = window.open(''); setTimeout(() => { w.location = ${JSON.stringify(vault(m))}; }, 1500);`,
    blankThenWriteScript: (m) =>
      `const w = window.open(''); w.document.write('<script>location.href=' + ${JSON.stringify(JSON.stringify(vault(m)))} + '<\\/script>'); w.document.close();`,
    sameOriginThenNavigate: (m) =>
      `const w = window.open('/blank'); w.location = ${JSON.stringify(vault(m))};`,
    sameOriginThenNavigateSoon: (m) =>
      `const w = window.open('/blank'); setTimeout(() => { try { w.location = ${JSON.stringify(vault(m))}; } catch (e) {} }, 30);`,
    redirectLate: (m) =>
      `setTimeout(() => window.open(${JSON.stringify(site.url('evil.example', `/redirect?to=${encodeURIComponent(vault(m))}`))}), 1500)`,
    redirect307Now: (m) =>
      `window.open(${JSON.stringify(site.url('evil.example', `/redirect307?to=${encodeURIComponent(vault(m))}`))})`,
    popupOfPopup: (m) =>
      `window.open(${JSON.stringify(site.url('evil.example', `/relay?to=${encodeURIComponent(vault(m))}`))})`,
    formGetBlank: (m) =>
      `const f = document.createElement('form'); f.method = 'GET'; f.target = '_blank'; f.action = ${JSON.stringify(site.url('vault.example', '/settings/revoke'))}; f.innerHTML = '<input name=m value=${m}>'; document.body.append(f); f.submit();`,
    formPostBlank: (m) =>
      `const f = document.createElement('form'); f.method = 'POST'; f.target = '_blank'; f.action = ${JSON.stringify(site.url('vault.example', `/settings/revoke?m=${m}`))}; document.body.append(f); f.submit();`,
    burst: (m) =>
      `for (let i = 0; i < 8; i++) window.open(${JSON.stringify(vault(m))} + '&i=' + i, 'w' + i);`,
    burstLate: (m) =>
      `setTimeout(() => { for (let i = 0; i < 8; i++) window.open(${JSON.stringify(vault(m))} + '&i=' + i, 'w' + i); }, 1500)`,
  };

  before(async () => {
    site = await startFixture({
      '/settings/revoke': (_req, _body, res) =>
        html(res, '<title>Revoked</title><p>all sessions revoked</p>'),
      'POST /settings/revoke': (_req, _body, res) => html(res, '<title>Revoked</title>'),
      '/blank': (_req, _body, res) => html(res, '<title>blank</title>'),
      '/redirect': (req, _body, res) => {
        const to = new URL(req.url ?? '/', 'http://x').searchParams.get('to') ?? '/';
        res.writeHead(302, { location: to }).end();
      },
      '/redirect307': (req, _body, res) => {
        const to = new URL(req.url ?? '/', 'http://x').searchParams.get('to') ?? '/';
        res.writeHead(307, { location: to }).end();
      },
      '/relay': (req, _body, res) => {
        const to = new URL(req.url ?? '/', 'http://x').searchParams.get('to') ?? '/';
        html(res, `<title>relay</title><script>window.open(${JSON.stringify(to)})</script>`);
      },
      '/frame': (req, _body, res) => {
        const to = new URL(req.url ?? '/', 'http://x').searchParams.get('to') ?? '/';
        html(
          res,
          `<title>frame</title><button onclick='window.open(${JSON.stringify(to)})'>FrameOpen</button>
          <button onclick='setTimeout(() => window.open(${JSON.stringify(to)}, "_blank", "noopener"), 1500)'>FrameLate</button>`,
        );
      },
      '/page': (_req, _body, res) =>
        html(
          res,
          `<title>Popups</title>${Object.entries(variants)
            .map(([name, body]) => `<button onclick='${body(name).replace(/'/g, '&#39;')}'>${name}</button>`)
            .join('\n')}
          <iframe src="${site.url('other.example', `/frame?to=${encodeURIComponent(vault('iframe'))}`)}"></iframe>`,
        ),
    });
    tw = await startInProcess({ rules: ['*://vault.example/settings/*'] });
    mcp = await tw.connect();
    mcp.human.policy = () => ({ decision: 'reject' });
  });
  after(async () => {
    await mcp?.close();
    await tw?.close();
    await site?.close();
  });

  test('no popup reaches a sensitive page unapproved, however the page opens it', async () => {
    const clicks: string[] = [];
    // Every variant in a tab of its own, then one wait for what each set off later.
    for (const name of Object.keys(variants)) {
      await mcp.call('new_page', { url: site.url('blog.example', '/page') });
      const snapshot = await mcp.call('take_snapshot');
      const clicked = await mcp.call('click', { ref: refOf(snapshot.text, name) });
      clicks.push(`${name}: ${clicked.text.slice(0, 200)}`);
    }
    await pause(4_000);
    const reached = Object.keys(variants).filter((name) => sensitiveHits(`m=${name}`).length > 0);
    assert.deepEqual(
      reached,
      [],
      `the sensitive page was reached by: ${reached.join(', ')}\n${clicks.join('\n')}`,
    );
  });

  test('a cross-site iframe opening a popup (now and later, noopener): nothing reaches the sensitive page', async () => {
    await mcp.call('new_page', { url: site.url('blog.example', '/page') });
    await waitFor('the frame', async () => /FrameOpen/.test((await mcp.call('take_snapshot')).text));
    const snapshot = await mcp.call('take_snapshot');
    await mcp.call('click', { ref: refOf(snapshot.text, 'FrameOpen') });
    await mcp.call('click', { ref: refOf(snapshot.text, 'FrameLate') });
    await pause(4_000);
    assert.equal(sensitiveHits('m=iframe').length, 0, JSON.stringify(sensitiveHits('m=iframe')));
  });
});
