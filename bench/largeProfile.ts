// `node --import tsx bench/largeProfile.ts` (BENCH_SCALES=1,4,16): where tabward's navigate+snapshot time goes on
// the large pages, in one process with the backstop on, stage by stage on the same document: the navigation
// (navigate_page: goto, the login-wall read), the whole take_snapshot, then each part of a snapshot alone:
// Chromium's accessibility tree (and its size), the tree tabward builds from the DOM snapshot instead (documents of
// 200 elements or more), tabward's facts read in its isolated world, the conversion and the rendering. Medians of a
// few rounds; the parts are timed one after the other, not inside a snapshot.
// BENCH_WRITE=1 writes the table to the `large-pages-profile` section of bench/results.md.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { findChrome } from '../src/browser/findChrome.ts';
import { collectLoginFacts } from '../src/browser/loginFacts.ts';
import { readTab } from '../src/browser/snapshot/axRead.ts';
import { type AxNode, axToAria } from '../src/browser/snapshot/axToAria.ts';
import { passwordsIn } from '../src/browser/snapshot/documentReads.ts';
import { capturedStyles, type DocumentSnapshot } from '../src/browser/snapshot/domSnapshotNodes.ts';
import { treeFromDomSnapshot } from '../src/browser/snapshot/domSnapshotTree.ts';
import { mainScope } from '../src/browser/snapshot/frameScopes.ts';
import { renderSnapshot } from '../src/browser/snapshot/snapshotFormat.ts';
import { median, rig } from './backstopOverhead.ts';
import { largePages, largeScales } from './largePages.ts';
import { writeResultsSection } from './resultsFile.ts';

const scales = process.env.BENCH_SCALES ? process.env.BENCH_SCALES.split(',').map(Number) : largeScales;
const rounds = Number(process.env.BENCH_REPEATS ?? 5);
// Frames are left out here (one host), and the news page (its time is its assets loading, not its snapshot): the
// MCP bench (large.ts) measures both.
const pages = largePages(scales).filter(
  (page) => Object.keys(page.frames).length === 0 && page.kind !== 'news front page',
);
const site = createServer((req, res) => {
  const page = pages[Number(new URL(req.url ?? '/', 'http://x').pathname.slice(1))];
  res.writeHead(page ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' }).end(page?.html ?? '');
});
await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', () => resolve()));
const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
const chrome = findChrome(process.env.TABWARD_CHROME);
const { session, runner } = rig(chrome, true);
// The browser's own navigation, on a tab of a browser without tabward's guard: what navigate_page adds is the rest.
const bare = rig(chrome, false);
const caller = { frontEnd: 'bench' };
const timed = async <T>(into: number[], work: () => Promise<T> | T): Promise<T> => {
  const start = performance.now();
  const value = await work();
  into.push(performance.now() - start);
  return value;
};
const rows: string[] = [];
try {
  await runner.call('new_page', { url: 'about:blank' }, caller);
  const plain = (await bare.session.newPage()).page;
  for (const [index, page] of pages.entries()) {
    const t = {
      goto: [] as number[],
      navigate: [] as number[],
      snapshot: [] as number[],
      loginFacts: [] as number[],
      tree: [] as number[],
      domTree: [] as number[],
      facts: [] as number[],
      readTab: [] as number[],
      convert: [] as number[],
      render: [] as number[],
    };
    let treeKb = 0;
    let axNodes = 0;
    for (let round = 0; round < rounds; round++) {
      const url = `${origin}/${index}?round=${round}`;
      await timed(t.goto, () => plain.goto(url, { waitUntil: 'domcontentloaded' }));
      await timed(t.navigate, () => runner.call('navigate_page', { url }, caller));
      await timed(t.snapshot, () => runner.call('take_snapshot', { maxTokens: 1e9 }, caller));
      const tab = await session.target();
      const cdp = await tab.cdpSession();
      const scope = await mainScope(cdp);
      await timed(t.loginFacts, () => collectLoginFacts(tab, url, 15_000));
      const { nodes } = (await timed(t.tree, () =>
        cdp.send('Accessibility.getFullAXTree', { frameId: scope.frameId }),
      )) as { nodes: AxNode[] };
      treeKb = JSON.stringify(nodes).length / 1024;
      // The same document's tree as tabward builds it from the DOM snapshot (documents of 200 elements or more).
      await timed(t.domTree, async () => {
        const captured = (await cdp.send('DOMSnapshot.captureSnapshot', {
          computedStyles: [...capturedStyles],
          includeDOMRects: false,
        })) as unknown as { documents: DocumentSnapshot[]; strings: string[] };
        const document = captured.documents.find((each) => captured.strings[each.frameId] === scope.frameId);
        if (document) treeFromDomSnapshot({ document, strings: captured.strings });
      });
      axNodes = nodes.length;
      await timed(t.facts, () => passwordsIn(cdp, scope.frameId));
      await timed(t.readTab, () => readTab(tab.page, cdp, 15_000));
      const tree = await timed(t.convert, () =>
        axToAria(nodes, { frameKey: 'f', frameContent: () => undefined, pointer: new Set() }),
      );
      await timed(t.render, () => renderSnapshot(tree, { pageUrl: url }));
    }
    const m = (values: number[]) => median(values).toFixed(1);
    rows.push(
      `| ${page.name} | ${m(t.goto)} | ${m(t.navigate)} | ${m(t.snapshot)} | ${m(t.loginFacts)} | ${m(t.tree)} (${axNodes} nodes, ${treeKb.toFixed(0)} KB) | ${m(t.domTree)} | ${m(t.facts)} | ${m(t.readTab)} | ${m(t.convert)} | ${m(t.render)} |`,
    );
    process.stderr.write(`${rows.at(-1)}\n`);
  }
} finally {
  await Promise.all([session.close(), bare.session.close()]);
  site.close();
}
const header = [
  '| page | browser navigation (bare goto) | navigate_page | take_snapshot | login-wall read | AX tree (getFullAXTree) | DOM snapshot tree (capture + build) | facts read (isolated world) | whole read (readTab) | conversion | rendering |',
  '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
];
const report = [
  `In process, backstop on, medians of ${rounds} rounds, ms; load average ${loadavg()
    .map((n) => n.toFixed(1))
    .join(' ')}.`,
  '',
  ...header,
  ...rows,
].join('\n');
if (process.env.BENCH_WRITE) writeResultsSection('large-pages-profile', report);
process.stdout.write(`${report}\n`);
