// A snapshot taken right after a navigation, while the page's cross-site frames are still committing their documents
// (navigate_page ends when the main document is parsed), shows what those frames hold: the first read of a document
// waits for frames that have no document yet, rather than read them empty or be interrupted by each commit until it
// gives up ("kept navigating"). Nothing here measures time: the frames answer a little late, one after another; or
// they answer at once, and their commits wait for the browser to start a renderer process for each site (8 sites
// commit within about 1.1 s of the page's parse on an idle machine, past the wait for a server that does not answer).

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';

const frames = [
  { host: 'comments.test', text: 'First comment here', lateMs: 30 },
  { host: 'stores.test', text: 'Store on River street', lateMs: 80 },
  { host: 'video.test', text: 'Transcript of the match', lateMs: 150 },
];
const manySites = Array.from({ length: 8 }, (_, index) => `site${index}.test`);
let site: Fixture;
let tw: InProcessBrowser;
let mcp: InProcessMcp;

before(async () => {
  site = await startFixture({
    '/page': (_req, _body, res) =>
      html(
        res,
        `<title>Report</title><h1>Match report</h1>${frames
          .map(
            ({ host }) => `<iframe title="${host}" src="${site.url(host, `/frame?host=${host}`)}"></iframe>`,
          )
          .join('')}`,
      ),
    '/many': (_req, _body, res) =>
      html(
        res,
        `<title>Wall</title>${manySites
          .map(
            (host) => `<iframe title="${host}" src="${site.url(host, `/answered?host=${host}`)}"></iframe>`,
          )
          .join('')}`,
      ),
    '/answered': (req, _body, res) => {
      const host = new URL(req.url ?? '/', 'http://x').searchParams.get('host');
      html(res, `<p>Post from ${host}</p><button>Share</button>`);
    },
    '/frame': async (req, _body, res) => {
      const host = new URL(req.url ?? '/', 'http://x').searchParams.get('host');
      const frame = frames.find((each) => each.host === host);
      await sleep(frame?.lateMs ?? 0);
      html(res, `<p>${frame?.text ?? 'unknown'}</p><button>Like</button>`);
    },
  });
  tw = await startInProcess();
  mcp = await tw.connect();
});

after(async () => {
  await mcp?.close();
  await tw?.close();
  await site?.close();
});

test('a snapshot right after a navigation shows the frames that commit after it, each with its text and controls', async () => {
  for (let round = 0; round < 3; round++) {
    const opened = await mcp.call(round === 0 ? 'new_page' : 'navigate_page', {
      url: site.url('news.test', `/page?round=${round}`),
    });
    assert.equal(opened.isError, false, opened.text);
    const snapshot = await mcp.call('take_snapshot');
    assert.equal(snapshot.isError, false, snapshot.text);
    for (const { text } of frames)
      assert.ok(snapshot.text.includes(text), `${text} not in:\n${snapshot.text}`);
    assert.equal(snapshot.text.match(/button Like @e\d+/g)?.length, frames.length, snapshot.text);
  }
});

test('a snapshot right after a navigation waits for frames whose servers answered until the browser commits them', async () => {
  for (let round = 0; round < 2; round++) {
    const opened = await mcp.call('navigate_page', { url: site.url('wall.test', `/many?round=${round}`) });
    assert.equal(opened.isError, false, opened.text);
    const snapshot = await mcp.call('take_snapshot');
    assert.equal(snapshot.isError, false, snapshot.text);
    for (const host of manySites)
      assert.ok(snapshot.text.includes(`Post from ${host}`), `${host}'s post not in:\n${snapshot.text}`);
    assert.equal(snapshot.text.match(/button Share @e\d+/g)?.length, manySites.length, snapshot.text);
  }
});
