// `node --import tsx bench/lazyEmbed.ts` (BENCH_REPEATS, BENCH_BASELINE=<a checkout's bin/tabward, built>,
// BENCH_ONLY): navigate + snapshot of an article that carries a lazy video embed below the fold, as news and blog
// pages do. The embed loads when scrolled to, so it has no document when the page is read: a server that waits for
// every frame to load waits for one that will not. Each call is given `callLimitMs`; one that takes longer is shown
// as "> limit" and the server's other rounds are skipped. Writes the "lazy-embed" section of bench/results.md.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { findChrome } from '../src/browser/findChrome.ts';
import { connectTo } from './measure.ts';
import { writeResultsSection } from './resultsFile.ts';
import { servers } from './servers.ts';

const repeats = Number(process.env.BENCH_REPEATS ?? 5);
const only = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',')) : undefined;
const callLimitMs = 20_000;
const chrome = findChrome(process.env.TABWARD_CHROME);

const paragraphs = Array.from(
  { length: 40 },
  (_, i) => `<p>Paragraph ${i + 1} of the story, long enough to wrap over a line or two of the page.</p>`,
).join('');
const article = (embed: string) =>
  `<!doctype html><title>Story</title><h1>The river report</h1>${paragraphs}<div style="height:4000px"></div>
  <iframe title="Video of the day" loading="lazy" src="${embed}" width="560" height="315"></iframe>`;

/** The article on 127.0.0.1, the embed on 127.0.0.2: another site, another process. */
const embedSite = createServer((_req, res) =>
  res.writeHead(200, { 'content-type': 'text/html' }).end('<p>Video of the day</p><button>Play</button>'),
);
await new Promise<void>((resolve) => embedSite.listen(0, '127.0.0.2', resolve));
const embedUrl = `http://127.0.0.2:${(embedSite.address() as AddressInfo).port}/clip`;
const site = createServer((_req, res) =>
  res.writeHead(200, { 'content-type': 'text/html' }).end(article(embedUrl)),
);
await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
const pageUrl = (round: number) =>
  `http://127.0.0.1:${(site.address() as AddressInfo).port}/story?round=${round}`;

const under = servers(chrome)
  .flatMap((server) => {
    const baseline = process.env.BENCH_BASELINE;
    if (server.name !== 'tabward' || !baseline) return [server];
    return [server, { ...server, name: 'tabward (baseline)', args: [baseline, ...server.args.slice(1)] }];
  })
  .filter((server) => !only || only.has(server.name));

const results = new Map<string, { ms: number[]; overLimit: boolean }>();
for (const server of under) {
  process.stderr.write(`${server.name}\n`);
  const { client } = await connectTo(server);
  const figures = { ms: [] as number[], overLimit: false };
  results.set(server.name, figures);
  const call = async (request: { name: string; arguments: Record<string, unknown> }) => {
    const result = await client.callTool(request, undefined, { timeout: callLimitMs });
    if (result.isError) throw new Error(`${server.name} ${request.name}: ${JSON.stringify(result.content)}`);
  };
  try {
    // Warm: the browser started, a first page read.
    await call(server.navigate(pageUrl(-1)));
    await call(server.snapshot);
    for (let round = 0; round < repeats; round++) {
      const before = performance.now();
      await call(server.navigate(pageUrl(round)));
      await call(server.snapshot);
      figures.ms.push(performance.now() - before);
    }
  } catch (error) {
    if (!/timed out|timeout/i.test(String(error))) throw error;
    figures.overLimit = true;
  } finally {
    await client.close();
  }
}
site.close();
embedSite.close();

const median = (values: readonly number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const shown = (name: string) => {
  const figures = results.get(name);
  if (!figures) return '–';
  if (figures.overLimit) return `> ${callLimitMs / 1000} s (a call passed the limit)`;
  return `${median(figures.ms).toFixed(0)}`;
};
const report = [
  `Navigate + snapshot of an article with a lazy video embed below the fold, median of ${repeats} (ms):`,
  '',
  `| ${under.map((server) => server.name).join(' | ')} |`,
  `| ${under.map(() => '---').join(' | ')} |`,
  `| ${under.map((server) => shown(server.name)).join(' | ')} |`,
].join('\n');
if (!only) writeResultsSection('lazy-embed', report);
process.stdout.write(`${report}\n`);
