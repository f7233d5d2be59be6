// Two costs the peers' table does not isolate (issue 13): the isolated browser's start to its first tab, piped
// (what tabward does) against spawning with a debugging port and attaching over CDP (what it did), alternated
// round by round; and an input tool's round trip (click, fill) through the ToolRunner with the backstop on, against
// Playwright's own locator.click/fill on the same element (the floor). Medians. Run alone:
// `node --import tsx bench/startAndActions.ts`.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { connectCdp } from '../src/browser/connect.ts';
import { findChrome } from '../src/browser/findChrome.ts';
import { launchChrome } from '../src/browser/launch.ts';
import { launchIsolated } from '../src/browser/launchIsolated.ts';
import { withOwnBrowserFeatures } from '../src/browser/session.ts';
import { median, rig } from './backstopOverhead.ts';

export interface StartAndActionFigures {
  readonly pipedFirstTabMs: number;
  readonly portFirstTabMs: number;
  readonly clickMs: number;
  readonly fillMs: number;
  readonly bareClickMs: number;
  readonly bareFillMs: number;
  readonly load: string;
}

const form = `<title>Form</title><form onsubmit="return false"><label>Name <input id="name"></label>
<button type="button" onclick="this.textContent = this.textContent">Save</button></form>`;

export async function measureStartAndActions(chrome: string, rounds = 5): Promise<StartAndActionFigures> {
  const load = loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');
  const options = { executablePath: chrome, headless: true, extraArgs: withOwnBrowserFeatures([]) };
  const piped: number[] = [];
  const port: number[] = [];
  // playwright-core loaded before either is timed.
  await (await launchIsolated(options)).close();
  for (let round = 0; round < rounds; round++) {
    let start = performance.now();
    const launched = await launchIsolated(options);
    // Both start with a blank tab: the first tab is that one.
    if (!launched.firstTab) await launched.context.newPage();
    piped.push(performance.now() - start);
    await launched.close();
    start = performance.now();
    const chromeWithPort = await launchChrome(options);
    const browser = await connectCdp(chromeWithPort.wsEndpoint, 30_000, () => undefined);
    const context = browser.contexts()[0] ?? (await browser.newContext());
    if (!context.pages()[0]) await context.newPage();
    port.push(performance.now() - start);
    await chromeWithPort.close();
  }
  return {
    pipedFirstTabMs: median(piped),
    portFirstTabMs: median(port),
    ...(await measureActions(chrome)),
    load,
  };
}

async function measureActions(chrome: string) {
  const site = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(form));
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
  const { session, runner } = rig(chrome, true);
  const caller = { frontEnd: 'bench' };
  const times = {
    click: [] as number[],
    fill: [] as number[],
    bareClick: [] as number[],
    bareFill: [] as number[],
  };
  try {
    await runner.call('new_page', { url }, caller);
    const snapshot = (await runner.call('take_snapshot', {}, caller)).content.map((part) =>
      part.type === 'text' ? part.text : '',
    );
    const refOf = (name: string) =>
      new RegExp(`^\\s*\\S+ "?${name}"? [^\\n]*?(@\\S+)`, 'm')
        .exec(snapshot.join('\n'))
        ?.slice(1)
        .find(Boolean);
    const button = refOf('Save')?.slice(1);
    const field = refOf('Name')?.slice(1);
    if (!button || !field) throw new Error(`no refs in ${snapshot.join('\n')}`);
    const page = (await session.target()).page;
    for (let i = 0; i < 45; i++) {
      const keep = i >= 5;
      let start = performance.now();
      await runner.call('click', { ref: button }, caller);
      if (keep) times.click.push(performance.now() - start);
      start = performance.now();
      await page.getByRole('button', { name: 'Save' }).click();
      if (keep) times.bareClick.push(performance.now() - start);
      start = performance.now();
      await runner.call('fill', { ref: field, value: `x${i}` }, caller);
      if (keep) times.fill.push(performance.now() - start);
      start = performance.now();
      await page.getByLabel('Name').fill(`y${i}`);
      if (keep) times.bareFill.push(performance.now() - start);
    }
  } finally {
    await session.close();
    site.close();
  }
  return {
    clickMs: median(times.click),
    fillMs: median(times.fill),
    bareClickMs: median(times.bareClick),
    bareFillMs: median(times.bareFill),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const figures = await measureStartAndActions(findChrome(process.env.TABWARD_CHROME));
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}
