// Popups the human approves load their page for real once watched (browser/popupDocuments.ts, RouteJudge.startPopup):
// one opened to an address with a fragment, and a blank one navigated at once, stayed on "Opening…" for good and held
// the click that opened them for the whole 5 s bound (found by an attack review). Assertions on what the fixture
// server received.

import { after, before, describe, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { refOf } from '../helpers/mcpClient.ts';
import { waitFor } from '../helpers/waitFor.ts';

describe('approved popups load their page', () => {
  let site: Fixture;
  let tw: InProcessBrowser;
  let mcp: InProcessMcp;
  const hits = (marker: string) => site.seen.filter((request) => request.path.includes(marker)).length;
  const dest = (marker: string) => site.url('docs.example', `/target?m=${marker}`);

  const variants: Record<string, (m: string) => string> = {
    plain: (m) => `window.open(${JSON.stringify(dest(m))})`,
    fragment: (m) => `window.open(${JSON.stringify(`${dest(m)}#section`)})`,
    blankThenNavigate: (m) => `const w = window.open(''); w.location = ${JSON.stringify(dest(m))};`,
  };

  before(async () => {
    site = await startFixture({
      '/target': (_req, _body, res) => html(res, '<title>Target loaded</title><p>loaded</p>'),
      '/page': (_req, _body, res) =>
        html(
          res,
          `<title>Popups</title>${Object.entries(variants)
            .map(([name, body]) => `<button onclick='${body(name).replace(/'/g, '&#39;')}'>${name}</button>`)
            .join('\n')}`,
        ),
    });
    tw = await startInProcess();
    mcp = await tw.connect();
    mcp.human.policy = () => ({ decision: 'approve' });
  });
  after(async () => {
    await mcp?.close();
    await tw?.close();
    await site?.close();
  });

  for (const [name, expected] of Object.entries({ plain: 1, fragment: 1, blankThenNavigate: 1 })) {
    // Loaded for real, the popup's judgement ends the click's wait for it (a popup left on its empty page held the
    // click for the whole 5 s bound).
    test(`${name}: the popup loads its page for real`, async () => {
      await mcp.call('new_page', { url: site.url('blog.example', '/page') });
      const snapshot = await mcp.call('take_snapshot');
      await mcp.call('click', { ref: refOf(snapshot.text, name) });
      await waitFor(
        `${name}: ${expected} real load(s) of the popup's page`,
        () => hits(`m=${name}`) >= expected,
        {
          timeoutMs: 8_000,
        },
      ).catch(async (error: Error) => {
        throw new Error(
          `${error.message}; server saw ${hits(`m=${name}`)}; pages: ${(await mcp.call('list_pages')).text}`,
        );
      });
    });
  }
});
