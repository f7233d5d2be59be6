// Out-of-process frames are hooked from their start (browser/pipeHooks.ts): three deep, one that moves to another site
// (a new process) on its own, a worker of one. The first request of each is its tab hook's (asked, sent once
// approved), never untied (refused unasked at the proxy) nor let go unjudged, and nothing hangs. Written by an
// attack review of the narrow hooks, which found it holding; kept as a regression test.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { waitFor } from '../helpers/waitFor.ts';

describe('deep and moving out-of-process frames', () => {
  let site: Fixture;
  let tw: InProcessBrowser;
  let mcp: InProcessMcp;
  const posts = (m: string) =>
    site.seen.filter(
      (r) => r.method === 'POST' && r.path.startsWith('/settings/profile') && r.path.includes(`m=${m}`),
    ).length;
  const postUrl = (m: string) => JSON.stringify(site.url('github.com', `/settings/profile?m=${m}`));

  before(async () => {
    site = await startFixture(
      {
        'POST /settings/profile': (_req, _body, res) => void res.writeHead(204).end(),
        '/early': (req, _body, res) => {
          const m = new URL(req.url ?? '/', 'http://x').searchParams.get('m') ?? '';
          html(
            res,
            `<title>Early</title><script>fetch(${postUrl('M')}.replace('M', ${JSON.stringify(m)}), { method: 'POST', mode: 'no-cors', body: 'early' })</script>`,
          );
        },
        '/nest': (req, _body, res) => {
          const q = new URL(req.url ?? '/', 'http://x').searchParams;
          const hosts = (q.get('hosts') ?? '').split(',').filter(Boolean);
          const m = q.get('m') ?? '';
          const [next, ...rest] = hosts;
          const src = next
            ? rest.length
              ? site.url(next, `/nest?m=${m}&hosts=${rest.join(',')}`)
              : site.url(next, `/early?m=${m}`)
            : '';
          html(res, `<title>nest</title>${src ? `<iframe src="${src}"></iframe>` : ''}`);
        },
        '/mover': (req, _body, res) => {
          const m = new URL(req.url ?? '/', 'http://x').searchParams.get('m') ?? '';
          html(
            res,
            `<title>mover</title><script>setTimeout(() => { location = ${JSON.stringify(site.url('third.example', '/early?m='))} + ${JSON.stringify(m)}; }, 200)</script>`,
          );
        },
        '/workerframe': (req, _body, res) => {
          const m = new URL(req.url ?? '/', 'http://x').searchParams.get('m') ?? '';
          html(
            res,
            `<title>wf</title><script>new Worker(URL.createObjectURL(new Blob([${JSON.stringify(`fetch(${postUrl('M')}.replace('M', '`)} + ${JSON.stringify(m)} + "'), { method: 'POST', mode: 'no-cors', body: 'w' })"], {type: 'text/javascript'})))</script>`,
          );
        },
        '/blank': (_req, _body, res) => html(res, '<title>Host page</title>'),
      },
      { tls: true },
    );
    tw = await startInProcess();
    mcp = await tw.connect();
    mcp.human.policy = () => ({ decision: 'approve' });
  });
  after(async () => {
    await mcp?.close();
    await tw?.close();
    await site?.close();
  });

  const addFrame = (src: string) =>
    `() => new Promise((done) => { const f = document.createElement('iframe'); f.src = ${JSON.stringify(src)}; f.onload = () => setTimeout(() => done(1), 1500); document.body.append(f); })`;

  const cases: Record<string, (m: string) => string> = {
    threeDeep: (m) => site.url('a.example', `/nest?m=${m}&hosts=b.example,c.example,d.example`),
    mover: (m) => site.url('other.example', `/mover?m=${m}`),
    workerInFrame: (m) => site.url('other.example', `/workerframe?m=${m}`),
  };

  for (const [name, src] of Object.entries(cases))
    test(`${name}: the first POST is asked and goes once approved`, async () => {
      await mcp.call('new_page', { url: site.url('blog.example', '/blank') });
      const asked = mcp.human.questions.length;
      await mcp.call('evaluate_script', { function: addFrame(src(name)) });
      await waitFor(`${name}: the approved POST`, () => posts(name) >= 1);
      const questions = mcp.human.questions.slice(asked);
      const untied = JSON.stringify(mcp.audit()).match(/[^"]{0,200}no hook of tabward.s could tie it/g) ?? [];
      const info = `${name}: posts ${posts(name)}, questions ${JSON.stringify(questions).slice(0, 400)}, untied ${JSON.stringify(untied)}`;
      assert.equal(posts(name), 1, info);
      assert.ok(
        questions.some((q) => q.includes('/settings/profile')),
        info,
      );
    });
});
