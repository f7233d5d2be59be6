// What settle() relies on to skip its quiet window (browser/rendererAnnouncements.ts): whatever a click handler
// starts (a request in any of its forms, a navigation, a window) is counted on tabward's own session of the tab by
// the time the page has answered a turn asked there after the click; a click that starts nothing counts nothing.
// Real Chromium, each case twice.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TrackedPage } from '../../src/browser/pages.ts';
import { BrowserSession } from '../../src/browser/session.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';

const starts: Record<string, string> = {
  'a fetch': `fetch('/ping?' + Math.random())`,
  'an XHR': `const x = new XMLHttpRequest(); x.open('POST', '/ping'); x.send('a')`,
  'a beacon': `navigator.sendBeacon('/ping', 'a')`,
  'an image': `new Image().src = '/ping.png?' + Math.random()`,
  'a fetch after a timer of 0': `setTimeout(() => fetch('/ping'), 0)`,
  'a fetch in an animation frame': `requestAnimationFrame(() => fetch('/ping'))`,
  // A starved machine draws the next frame late: here 150 ms, the page's own requestAnimationFrame delayed.
  'a fetch in an animation frame drawn late': `const raf = requestAnimationFrame.bind(window);
    window.requestAnimationFrame = (callback) => setTimeout(() => raf(callback), 150);
    requestAnimationFrame(() => fetch('/ping'))`,
  'a form submission': `document.getElementById('form').submit()`,
  'a location change': `location.href = '/ping?' + Math.random()`,
  'a new window': `window.open('/ping')`,
};

describe('what a click starts is announced before the page answers the turn after it', () => {
  let site: Fixture;
  let tab: TrackedPage | undefined;
  const session = new BrowserSession({
    mode: 'isolated',
    headless: true,
    chromeArgs: testChromeArgs,
    attach: {},
    attachTimeoutMs: 10_000,
    notify: () => undefined,
  });

  before(async () => {
    const buttons = Object.entries({ ...starts, nothing: 'this.textContent = this.textContent' })
      .map(([name, script]) => `<button onclick="${script.replaceAll('"', '&quot;')}">${name}</button>`)
      .join('\n');
    site = await startFixture({
      '/': (_req, _body, res) =>
        html(res, `<form id="form" method="post" action="/ping"><input name="a" value="1"></form>${buttons}`),
      '/ping': (_req, _body, res) => html(res, 'pong'),
    });
  });
  after(async () => {
    await session.close();
    await site?.close();
  });

  /** Announcements the click on `name` made, counted when the turn after it was answered. */
  const announcedBy = async (name: string): Promise<number> => {
    // A fresh tab each time: the last round's navigation cannot land in this one.
    await tab?.page.close();
    tab = await session.newPage();
    await tab.page.goto(site.url('site.example', '/'));
    const mark = await tab.announcements.mark();
    assert.notEqual(mark, undefined, 'counting could not be turned on');
    await tab.page.getByRole('button', { name, exact: true }).click({ noWaitAfter: true });
    const turned = await tab.announcements.turn(5_000);
    const counted = tab.announcements.since(mark ?? 0);
    // A navigation may end the document before it answers; then settle falls back to its quiet window anyway.
    return turned || counted > 0 ? counted : Number.NaN;
  };

  for (const name of Object.keys(starts)) {
    test(`${name} is counted`, async () => {
      for (let round = 0; round < 2; round++)
        assert.ok((await announcedBy(name)) >= 1, `${name}, round ${round}`);
    });
  }

  test('a click that starts nothing counts nothing', async () => {
    for (let round = 0; round < 2; round++) assert.equal(await announcedBy('nothing'), 0);
  });
});
