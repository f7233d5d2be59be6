// The cost of the choke point (issue 30): navigate + snapshot through the ToolRunner with the network backstop, once
// with everything the browser sends going through tabward's egress proxy and once with the CDP hooks alone, on every
// bench page, alternated in one process on the same Chromium. Medians, and their ratio per page.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { median, rig } from './backstopOverhead.ts';
import type { BenchPage } from './pages.ts';

export interface ChokePointFigures {
  readonly page: string;
  readonly withProxyMs: number;
  readonly withoutProxyMs: number;
}

const caller = { frontEnd: 'bench' };

export async function measureChokePoint(
  chrome: string,
  pages: readonly BenchPage[],
): Promise<ChokePointFigures[]> {
  const site = createServer((req, res) => {
    const page = pages[Number(new URL(req.url ?? '/', 'http://x').pathname.slice(1))];
    res.writeHead(page ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' }).end(page?.html ?? '');
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', () => resolve()));
  const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  const proxied = rig(chrome, true);
  const direct = rig(chrome, true, { egressProxy: false });
  const figures: ChokePointFigures[] = [];
  try {
    for (const one of [proxied, direct]) await one.runner.call('new_page', { url: `${origin}/0` }, caller);
    for (const [index, page] of pages.entries()) {
      const times = { proxied: [] as number[], direct: [] as number[] };
      for (let round = 0; round < 10; round++) {
        for (const [name, one] of [
          ['proxied', proxied],
          ['direct', direct],
        ] as const) {
          const started = performance.now();
          await one.runner.call('navigate_page', { url: `${origin}/${index}?round=${round}` }, caller);
          await one.runner.call('take_snapshot', {}, caller);
          if (round > 1) times[name].push(performance.now() - started);
        }
      }
      figures.push({
        page: page.name,
        withProxyMs: median(times.proxied),
        withoutProxyMs: median(times.direct),
      });
    }
  } finally {
    await Promise.all([proxied.session.close(), direct.session.close()]);
    site.close();
  }
  return figures;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { findChrome } = await import('../src/browser/findChrome.ts');
  const { benchPages } = await import('./pages.ts');
  const figures = await measureChokePoint(findChrome(process.env.TABWARD_CHROME), benchPages);
  for (const row of figures)
    process.stdout.write(
      `${row.page}: ${row.withProxyMs.toFixed(1)} ms with the proxy, ${row.withoutProxyMs.toFixed(1)} ms without (${(row.withProxyMs / row.withoutProxyMs).toFixed(2)}x)\n`,
    );
}
