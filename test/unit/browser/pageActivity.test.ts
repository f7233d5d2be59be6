// A tab's activity for settling (browser/pageActivity.ts), on a stand-in page that emits Playwright's request
// events: a passive load (an image, a beacon) holds a settle only until the backstop decided it and moves no quiet
// window; a fetch or a stylesheet holds it until answered and moves the window.

import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import type { Page, Request } from 'playwright-core';
import { PageActivity, requestDecided } from '../../../src/browser/pageActivity.ts';

function standIn() {
  const page = new EventEmitter();
  const request = (resourceType: string, method = 'GET') =>
    ({
      resourceType: () => resourceType,
      method: () => method,
      isNavigationRequest: () => false,
      url: () => `https://site.test/${resourceType}`,
      frame: () => ({ page: () => page }),
    }) as unknown as Request;
  return { page, request, activity: new PageActivity(page as unknown as Page) };
}

test('a passive load holds a settle until decided, and a screenshot until answered', () => {
  const { page, request, activity } = standIn();
  const mark = activity.mark();
  const image = request('image');
  page.emit('request', image);
  assert.equal(activity.pendingSince(mark), 1, 'undecided: waited for (it may still be held for a human)');
  requestDecided(image);
  assert.equal(activity.pendingSince(mark), 0, 'decided: its bytes are not waited for');
  assert.equal(activity.passiveLoads(), 1, 'still loading: a screenshot waits for it');
  page.emit('requestfinished', image);
  assert.equal(activity.passiveLoads(), 0);
});

test('a fetch, a stylesheet and a document hold a settle until answered, decided or not', () => {
  const { page, request, activity } = standIn();
  const mark = activity.mark();
  const sent = ['fetch', 'stylesheet', 'document', 'script'].map((type) => request(type));
  for (const each of sent) {
    page.emit('request', each);
    requestDecided(each);
  }
  assert.equal(activity.pendingSince(mark), 4);
  assert.equal(activity.passiveLoads(), 0);
  for (const each of sent) page.emit('requestfailed', each);
  assert.equal(activity.pendingSince(mark), 0);
});

test('only requests other than passive loads move the quiet window’s mark', () => {
  const { page, request, activity } = standIn();
  const before = activity.activeMark();
  for (const type of ['image', 'font', 'media', 'ping', 'texttrack', 'manifest', 'prefetch'])
    page.emit('request', request(type));
  assert.equal(activity.activeMark(), before, 'passive loads starting do not extend a quiet window');
  page.emit('request', request('xhr', 'POST'));
  assert.equal(activity.activeMark(), before + 1);
  assert.equal(activity.writeSince(0), 'POST https://site.test/xhr', 'the write is still told');
});
