// `node --import tsx bench/large.ts` (BENCH_REPEATS, BENCH_SCALES=1,4,16, BENCH_KINDS, BENCH_ONLY, BENCH_CLICK,
// BENCH_THINK_MS): tabward, chrome-devtools-mcp and Playwright MCP on the large generated pages (largePages.ts) at
// each scale, through the real MCP client, rounds interleaved: navigate+snapshot per page and size, the ratio to the
// faster peer, snapshot tokens against the leaner peer and against the page's floor (its visible text plus one
// handle per control), coverage, and a click into a page. Writes the `large-pages` section of bench/results.md.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { chromium } from 'playwright-core';
import { findChrome } from '../src/browser/findChrome.ts';
import { assetScript, type LargePage, largePages, largeScales } from './largePages.ts';
import { connectTo, coverage, tokens } from './measure.ts';
import { benchPages } from './pages.ts';
import { writeResultsSection } from './resultsFile.ts';
import { type ServerUnderTest, servers } from './servers.ts';

const repeats = Number(process.env.BENCH_REPEATS ?? 3);
const scales = process.env.BENCH_SCALES ? process.env.BENCH_SCALES.split(',').map(Number) : largeScales;
const only = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',')) : undefined;
const chrome = findChrome(process.env.TABWARD_CHROME);
// BENCH_SMALL=1: the main bench's seven small pages instead (to see that a change for large pages costs them nothing).
// BENCH_KINDS=<kinds, comma-separated> (largePages.ts `kind`): only those pages.
const kinds = process.env.BENCH_KINDS ? new Set(process.env.BENCH_KINDS.split(',')) : undefined;
const pages: LargePage[] = process.env.BENCH_SMALL
  ? benchPages.map((page) => ({ ...page, kind: page.name, scale: 1, frames: {} }))
  : largePages(scales).filter((page) => !kinds || kinds.has(page.kind));

/** The main pages on 127.0.0.1; each frame on a loopback address of its own: another site, another process. */
const frameHosts: Record<string, string> = {
  comments: '127.0.0.2',
  stores: '127.0.0.3',
  video: '127.0.0.4',
  ad: '127.0.0.5',
};
const origins = new Map<string, string>();
const handler = (req: IncomingMessage, res: ServerResponse) => {
  const [, index, frame, name] = new URL(req.url ?? '/', 'http://x').pathname.split('/');
  if (index === 'asset') return serveAsset(frame ?? '', res);
  // /start/<page>: a page with one link to that page, for the click measure.
  if (index === 'start')
    return res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(`<title>Start</title><a href="/${frame}">${startLink}</a>`);
  const page = pages[Number(index)];
  let html = frame === 'frame' ? page?.frames[name ?? ''] : page?.html;
  if (page && html && !frame)
    html = html.replace(/\{\{(\w+)\}\}/g, (_, key: string) => `${origins.get(key)}/${index}/frame/${key}`);
  res.writeHead(html ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' }).end(html ?? 'not found');
};
/** 1×1 PNG. */
const pixel = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
/** The site's assets (largePages.ts newsFront): cacheable for an hour, as a site's static files are. */
function serveAsset(file: string, res: ServerResponse): void {
  const cached = { 'cache-control': 'public, max-age=3600' };
  const script = /^app-(\d+)\.js$/.exec(file);
  if (script)
    res.writeHead(200, { 'content-type': 'text/javascript', ...cached }).end(assetScript(Number(script[1])));
  else if (file.endsWith('.css'))
    res
      .writeHead(200, { 'content-type': 'text/css', ...cached })
      .end('.story{margin:4px}h3{font-size:1.1em}');
  else if (file.endsWith('.png')) res.writeHead(200, { 'content-type': 'image/png', ...cached }).end(pixel);
  else res.writeHead(404).end();
}
const sites = await Promise.all(
  ['main', ...Object.keys(frameHosts)].map(
    (key) =>
      new Promise<ReturnType<typeof createServer>>((resolve) => {
        const site = createServer(handler);
        const host = frameHosts[key] ?? '127.0.0.1';
        site.listen(0, host, () => {
          origins.set(key, `http://${host}:${(site.address() as AddressInfo).port}`);
          resolve(site);
        });
      }),
  ),
);
const urlOf = (page: LargePage) => `${origins.get('main')}/${pages.indexOf(page)}`;
/** The link of the click measure: an agent reaching a page by clicking, as it mostly does. */
const startLink = 'Open the page';
// BENCH_CLICK=<kinds, comma-separated>: the pages also reached by a click (the settle after an action), default the
// news front page (an image per story); "none" for none.
const clickKinds = new Set((process.env.BENCH_CLICK ?? 'news front page').split(','));
const clickPages = pages.filter((page) => clickKinds.has(page.kind));
// The click is measured twice: right after the snapshot, and after BENCH_THINK_MS (default 1000) of the agent
// reading it, as a model does between two calls (seconds, in practice): what a server does while the agent thinks
// (tabward prepares Playwright's script in the document it just showed) counts for the second, never for the first.
const thinkMs = Number(process.env.BENCH_THINK_MS ?? 1000);

/** The floor: the page's visible text (innerText of every frame) plus one handle (" @eN") per control. */
async function floorTokens(page: LargePage): Promise<number> {
  const browser = await chromium.launch({ executablePath: chrome, args: ['--no-sandbox'] });
  try {
    const tab = await browser.newPage();
    await tab.goto(urlOf(page), { waitUntil: 'load' });
    const texts = await Promise.all(tab.frames().map((frame) => frame.evaluate('document.body.innerText')));
    const visible = (texts as string[])
      .join('\n')
      .split('\n')
      .map((line) => line.replace(/\s+/g, ' ').trim())
      .filter(Boolean)
      .join('\n');
    const handles = page.controls.map((_, i) => ` @e${i + 1}`).join('');
    return tokens(visible) + tokens(handles);
  } finally {
    await browser.close();
  }
}

interface Figures {
  latencyMs: number[];
  /** Clicking the start page's link into it, then the snapshot (clickPages only), right after the snapshot. */
  clickMs: number[];
  /** The same, the click made `thinkMs` after the snapshot that showed the link. */
  thoughtClickMs: number[];
  tokens: number;
  textCoverage: number;
  controlCoverage: number;
}
const results = new Map<string, Map<string, Figures>>();
/** tabward's snapshot budget is lifted here: the peers show the whole page, so tabward is measured on it too. */
const whole = (server: ServerUnderTest): ServerUnderTest =>
  server.name.startsWith('tabward')
    ? { ...server, snapshot: { name: 'take_snapshot', arguments: { maxTokens: 1e9 } } }
    : server;

async function round(server: ServerUnderTest): Promise<void> {
  const { client } = await connectTo(server);
  const call = async (request: { name: string; arguments: Record<string, unknown> }) => {
    const result = await client.callTool(request, undefined, { timeout: 120_000 });
    const text = (result.content as { type: string; text?: string }[])
      .map((part) => part.text ?? '')
      .join('\n');
    if (result.isError) throw new Error(`${server.name} ${request.name}: ${text.slice(0, 300)}`);
    return text;
  };
  try {
    // The browser started and warm, as in a session after its first page.
    const first = pages[0];
    if (first) {
      await call(server.navigate(`${urlOf(first)}?warm`));
      await call(server.snapshot);
    }
    for (const page of pages) {
      const before = performance.now();
      await call(server.navigate(urlOf(page)));
      const snapshot = await call(server.snapshot);
      const latencyMs = performance.now() - before;
      const byPage = results.get(server.name) ?? new Map<string, Figures>();
      results.set(server.name, byPage);
      const seen = byPage.get(page.name);
      const shown = { tokens: tokens(snapshot), ...coverage(snapshot, page, server.ref) };
      const whole = (f: { textCoverage: number; controlCoverage: number }) =>
        f.textCoverage + f.controlCoverage;
      // Tokens are counted on the round that showed the most of the page: a snapshot taken before a frame loaded
      // is smaller for showing less.
      if (!seen) byPage.set(page.name, { latencyMs: [latencyMs], clickMs: [], thoughtClickMs: [], ...shown });
      else {
        seen.latencyMs.push(latencyMs);
        if (whole(shown) > whole(seen)) Object.assign(seen, shown);
      }
      if (process.env.BENCH_DUMP === server.name) process.stdout.write(`\n===== ${page.name}\n${snapshot}\n`);
    }
    for (const page of clickPages)
      for (const think of [0, thinkMs]) {
        await call(server.navigate(`${origins.get('main')}/start/${pages.indexOf(page)}`));
        const click = server.click(await call(server.snapshot), startLink);
        if (!click)
          throw new Error(`${server.name}: no "${startLink}" link in its snapshot of the start page`);
        if (think > 0) await new Promise((resolve) => setTimeout(resolve, think));
        const before = performance.now();
        await call(click);
        await call(server.snapshot);
        const figures = results.get(server.name)?.get(page.name);
        (think > 0 ? figures?.thoughtClickMs : figures?.clickMs)?.push(performance.now() - before);
      }
  } finally {
    await client.close();
  }
}

const under = servers(chrome)
  .flatMap((server) => {
    // BENCH_BASELINE=<a checkout's bin/tabward, built>: that tabward too, as "tabward (baseline)", for before/after.
    const baseline = process.env.BENCH_BASELINE;
    if (server.name !== 'tabward' || !baseline) return [server];
    return [server, { ...server, name: 'tabward (baseline)', args: [baseline, ...server.args.slice(1)] }];
  })
  .filter((server) => !only || only.has(server.name))
  .map(whole);
for (let r = 0; r < repeats; r++)
  for (const server of under) {
    process.stderr.write(`round ${r + 1}/${repeats}: ${server.name}\n`);
    await round(server);
  }
const floors = new Map<string, number>();
for (const page of pages) floors.set(page.name, await floorTokens(page));
for (const site of sites) site.close();

const median = (values: readonly number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const names = under.map((server) => server.name);
const emptyFigures: Figures = {
  latencyMs: [],
  clickMs: [],
  thoughtClickMs: [],
  tokens: 0,
  textCoverage: 0,
  controlCoverage: 0,
};
const peers = names.filter((name) => !name.startsWith('tabward'));
const get = (name: string, page: LargePage) => results.get(name)?.get(page.name);
const lines = [
  `${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, ${repeats} rounds interleaved, medians, load average ${loadavg()
    .map((n) => n.toFixed(1))
    .join(' ')}`,
  '',
  `| page | ${names.map((n) => `${n} ms`).join(' | ')} | ÷ faster peer (≤ 0.8) | rounds ≤ 0.8 (each round's ratio, least–most) | ${names.map((n) => `${n} tokens`).join(' | ')} | ÷ leaner peer (≤ 0.6) | floor | ÷ floor (≤ 1.2) | coverage: text, controls (${names.join(', ')}) |`,
  `| --- | ${names.map(() => '---').join(' | ')} | --- | --- | ${names.map(() => '---').join(' | ')} | --- | --- | --- | --- |`,
];
for (const page of pages) {
  const ours = get('tabward', page);
  const ms = names.map((name) => median(get(name, page)?.latencyMs ?? []));
  const fastest = Math.min(...peers.map((name) => median(get(name, page)?.latencyMs ?? [])));
  const leanest = Math.min(...peers.map((name) => get(name, page)?.tokens ?? Number.POSITIVE_INFINITY));
  const floor = floors.get(page.name) ?? 0;
  const ratio = ours ? median(ours.latencyMs) / fastest : Number.NaN;
  const tokenRatio = ours ? ours.tokens / leanest : Number.NaN;
  const floorRatio = ours ? ours.tokens / floor : Number.NaN;
  const baseline = get('tabward (baseline)', page);
  // Each round's own ratio (tabward's time over the faster peer's in that round): how far one run's rows move.
  const perRound = (ours?.latencyMs ?? []).map(
    (ms, round) =>
      ms / Math.min(...peers.map((name) => get(name, page)?.latencyMs[round] ?? Number.POSITIVE_INFINITY)),
  );
  const spread =
    perRound.length > 0
      ? `${perRound.filter((value) => value <= 0.8).length}/${perRound.length} (${Math.min(...perRound).toFixed(2)}–${Math.max(...perRound).toFixed(2)})`
      : '–';
  // With a baseline in the run, its ratio follows in brackets: before and after, measured side by side.
  const mark = (value: number, target: number, before?: number) =>
    `${value.toFixed(2)} ${value <= target ? '✓' : '✗'}${before === undefined ? '' : ` (baseline ${before.toFixed(2)})`}`;
  const cover = names
    .map((name) => {
      const f = get(name, page);
      return f ? `${Math.round(f.textCoverage * 100)}/${Math.round(f.controlCoverage * 100)}%` : '–';
    })
    .join(', ');
  lines.push(
    `| ${page.name} | ${ms.map((v) => v.toFixed(0)).join(' | ')} | ${mark(ratio, 0.8, baseline && median(baseline.latencyMs) / fastest)} | ${spread} | ${names.map((n) => get(n, page)?.tokens ?? '–').join(' | ')} | ${mark(tokenRatio, 0.6, baseline && baseline.tokens / leanest)} | ${floor} | ${mark(floorRatio, 1.2, baseline && baseline.tokens / floor)} | ${cover} |`,
  );
}
if (clickPages.length > 0) {
  const clickRow = (page: LargePage, pick: (figures: Figures) => number[]) => {
    const ms = names.map((name) => median(pick(get(name, page) ?? emptyFigures)));
    const fastest = Math.min(...peers.map((name) => median(pick(get(name, page) ?? emptyFigures))));
    const ours = median(pick(get('tabward', page) ?? emptyFigures)) / fastest;
    const baseline = get('tabward (baseline)', page);
    const before = baseline ? ` (baseline ${(median(pick(baseline)) / fastest).toFixed(2)})` : '';
    return `${ms.map((v) => v.toFixed(0)).join(' | ')} | ${ours.toFixed(2)} ${ours <= 0.8 ? '✓' : '✗'}${before}`;
  };
  lines.push(
    '',
    `A click on a link into the page, then a snapshot (the start page and the page visited before, so its assets are cached), made right after the snapshot that showed the link, and ${thinkMs} ms after it:`,
    '',
    `| page | ${names.map((n) => `${n} ms`).join(' | ')} | ÷ faster peer (≤ 0.8) | ${names.map((n) => `${n} ms, after ${thinkMs} ms`).join(' | ')} | ÷ faster peer (≤ 0.8) |`,
    `| --- | ${names.map(() => '---').join(' | ')} | --- | ${names.map(() => '---').join(' | ')} | --- |`,
    ...clickPages.map(
      (page) =>
        `| ${page.name} | ${clickRow(page, (f) => f.clickMs)} | ${clickRow(page, (f) => f.thoughtClickMs)} |`,
    ),
  );
}
const report = lines.join('\n');
if (!only && !kinds && !process.env.BENCH_SMALL) writeResultsSection('large-pages', report);
process.stdout.write(`${report}\n`);
