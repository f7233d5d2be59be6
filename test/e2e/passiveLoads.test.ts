// Passive loads (images, fonts, media) and settling (browser/pageActivity.ts, docs/architecture.md "Settling"): an
// action waits for an image only until the network backstop has decided it, not for its bytes, while a fetch the
// page sent is waited for until answered; a screenshot waits for the images still loading. The fixture server holds
// the image until the test lets it go, so what is asserted is what was pending, never how long anything took.

import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { TrackedPage } from '../../src/browser/pages.ts';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { differingRows } from '../helpers/pngRows.ts';

/** A 64×64 red square (SVG, so no encoder is needed): a screenshot with it differs from one without. */
const redSquare =
  '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><rect width="64" height="64" fill="red"/></svg>';

describe('passive loads and settling', () => {
  let site: Fixture;
  let browser: InProcessBrowser;
  let mcp: InProcessMcp;
  /** Answers held by the fixture until the test lets them go, by path. */
  const held = new Map<string, ServerResponse[]>();
  const hold = (path: string, res: ServerResponse): void => {
    held.set(path, [...(held.get(path) ?? []), res]);
  };
  const release = (path: string, type: string, body: string) => {
    for (const res of held.get(path) ?? []) res.writeHead(200, { 'content-type': type }).end(body);
    held.delete(path);
  };
  const pending = (path: string) => held.get(path)?.length ?? 0;
  const tab = (): TrackedPage => {
    const selected = browser.browser.session.pages.selected;
    assert.ok(selected, 'a tab is selected');
    return selected;
  };
  /** Polls (bounded) until `ok` holds; fails naming what never happened. */
  const until = async (ok: () => boolean, what: string) => {
    for (let i = 0; i < 200 && !ok(); i++) await new Promise((done) => setTimeout(done, 25));
    assert.ok(ok(), what);
  };

  before(async () => {
    site = await startFixture({
      '/gallery': (_req, _body, res) =>
        html(
          res,
          `<title>Gallery</title><p>Gallery</p><img src="/slow/picture.svg" width="64" height="64" alt="picture">`,
        ),
      '/feed': (_req, _body, res) =>
        html(res, `<title>Feed</title><p>Feed</p><script>fetch('/slow/items.json')</script>`),
      '/slow/picture.svg': (_req, _body, res) => hold('/slow/picture.svg', res),
      '/slow/items.json': (_req, _body, res) => hold('/slow/items.json', res),
    });
    browser = await startInProcess();
    mcp = await browser.connect();
  });
  after(async () => {
    release('/slow/picture.svg', 'image/svg+xml', redSquare);
    release('/slow/items.json', 'application/json', '[]');
    await mcp?.close();
    await browser?.close();
    await site?.close();
  });

  test('an image the backstop let go holds no settle; it is still loading, and a screenshot waits for it', async () => {
    const opened = await mcp.call('navigate_page', { url: site.url('photos.example', '/gallery') });
    assert.equal(opened.isError, false, opened.text);
    await until(() => pending('/slow/picture.svg') === 1, 'the image reached the server');
    const { activity } = tab();
    // Everything this document sent: the image is in flight, yet nothing is pending for a settle.
    assert.equal(activity.passiveLoads(), 1, 'the image is still loading');
    assert.equal(activity.pendingSince(0), 0, 'a settle would wait for the decided image');

    const before = await mcp.client.callTool({ name: 'take_screenshot', arguments: {} });
    // A screenshot taken while the image is held lacks it; one started now waits for it, and it arrives meanwhile.
    const shot = mcp.client.callTool({ name: 'take_screenshot', arguments: {} });
    await new Promise((done) => setTimeout(done, 100));
    release('/slow/picture.svg', 'image/svg+xml', redSquare);
    const withImage = await shot;
    await until(() => activity.passiveLoads() === 0, 'the image finished loading');
    const later = await mcp.client.callTool({ name: 'take_screenshot', arguments: {} });
    const png = (result: unknown) =>
      Buffer.from(
        ((result as { content: { type: string; data?: string }[] }).content.find((c) => c.type === 'image')
          ?.data ?? '') as string,
        'base64',
      );
    assert.ok(differingRows(png(before), png(later)) > 0, 'the image changes the picture');
    assert.equal(differingRows(png(withImage), png(later)), 0, 'the screenshot waited for the image');
  });

  test('a fetch the page sent keeps a settle waiting until it is answered', async () => {
    const opened = await mcp.call('navigate_page', { url: site.url('feed.example', '/feed') });
    assert.equal(opened.isError, false, opened.text);
    await until(() => pending('/slow/items.json') === 1, 'the fetch reached the server');
    const { activity } = tab();
    assert.equal(activity.pendingSince(0), 1, 'the unanswered fetch is pending');
    release('/slow/items.json', 'application/json', '[]');
    await until(() => activity.pendingSince(0) === 0, 'the answered fetch is no longer pending');
  });
});
