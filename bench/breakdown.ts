// Where a navigate+snapshot's milliseconds go, page by page, in one process with the backstop on: the browser's
// own navigation (Playwright goto to DOMContentLoaded on a second, unguarded tab), what navigate_page adds to it
// (the backstop's two pauses of the document request, the login-wall read, guard and audit), the first
// take_snapshot of a fresh document and a second one (Chromium's accessibility tree, tabward's reads beside it
// and its rendering). Medians of alternated rounds.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { median, rig } from './backstopOverhead.ts';
import type { BenchPage } from './pages.ts';

export interface PageBreakdown {
  readonly page: string;
  readonly browserNavigationMs: number;
  readonly navigateOverheadMs: number;
  readonly firstSnapshotMs: number;
  readonly warmSnapshotMs: number;
}

export async function measureBreakdown(
  chrome: string,
  pages: readonly BenchPage[],
): Promise<PageBreakdown[]> {
  const site = createServer((req, res) => {
    const page = pages[Number(new URL(req.url ?? '/', 'http://x').pathname.slice(1))];
    res.writeHead(page ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' }).end(page?.html ?? '');
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', () => resolve()));
  const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  const guarded = rig(chrome, true);
  const bare = rig(chrome, false);
  const caller = { frontEnd: 'bench' };
  const out: PageBreakdown[] = [];
  try {
    await guarded.runner.call('new_page', { url: 'about:blank' }, caller);
    const plain = (await bare.session.newPage()).page;
    for (const [index, page] of pages.entries()) {
      const figures = {
        goto: [] as number[],
        navigate: [] as number[],
        first: [] as number[],
        warm: [] as number[],
      };
      for (let round = 0; round < 6; round++) {
        const url = `${origin}/${index}?round=${round}`;
        let start = performance.now();
        await plain.goto(url, { waitUntil: 'domcontentloaded' });
        figures.goto.push(performance.now() - start);
        start = performance.now();
        await guarded.runner.call('navigate_page', { url }, caller);
        figures.navigate.push(performance.now() - start);
        start = performance.now();
        await guarded.runner.call('take_snapshot', {}, caller);
        figures.first.push(performance.now() - start);
        start = performance.now();
        await guarded.runner.call('take_snapshot', {}, caller);
        figures.warm.push(performance.now() - start);
      }
      const goto = median(figures.goto);
      out.push({
        page: page.name,
        browserNavigationMs: goto,
        navigateOverheadMs: median(figures.navigate) - goto,
        firstSnapshotMs: median(figures.first),
        warmSnapshotMs: median(figures.warm),
      });
    }
  } finally {
    await Promise.all([guarded.session.close(), bare.session.close()]);
    site.close();
  }
  return out;
}
