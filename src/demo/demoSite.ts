// The bundled demo site: "Acme intranet", with a public page, a private page behind a real login form, and
// an admin settings page whose buttons really change state on the server. Listens on 127.0.0.1 only; the
// demo's browsers reach it under the name intranet.acme.test through --host-resolver-rules.

import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DemoSite {
  readonly port: number;
  readonly origin: string;
  /** Every state-changing request the server accepted, in order. */
  readonly writes: string[];
  close(): Promise<void>;
}

export const demoHost = 'intranet.acme.test';

export async function startDemoSite(port = 0): Promise<DemoSite> {
  const sessions = new Set<string>();
  const writes: string[] = [];
  const server: Server = createServer((req, res) => {
    route(req, res, sessions, writes).catch(() => send(res, 500, page('Error', '<p>Server error</p>')));
  });
  // A port in use rejects, for `demo --site-only` to say which flag to change.
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    port: bound,
    origin: `http://${demoHost}:${bound}`,
    writes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function route(
  req: IncomingMessage,
  res: ServerResponse,
  sessions: Set<string>,
  writes: string[],
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://x');
  const user = loggedIn(req, sessions);
  if (url.pathname === '/' || url.pathname === '/wiki/public') return send(res, 200, publicPage);
  if (url.pathname === '/login' && req.method === 'POST') {
    const form = new URLSearchParams(await body(req));
    if (form.get('username') !== 'alice' || form.get('password') !== 'demo-password') {
      return send(res, 401, loginPage(url.searchParams.get('next') ?? '/', 'Wrong user name or password.'));
    }
    const sid = randomBytes(16).toString('hex');
    sessions.add(sid);
    res.writeHead(303, {
      location: safeNext(url.searchParams.get('next')),
      'set-cookie': `sid=${sid}; HttpOnly; SameSite=Lax; Path=/`,
    });
    return void res.end();
  }
  if (url.pathname === '/login') return send(res, 200, loginPage(url.searchParams.get('next') ?? '/'));
  if (!user) {
    res.writeHead(302, { location: `/login?next=${encodeURIComponent(url.pathname)}` });
    return void res.end();
  }
  if (url.pathname === '/wiki/private') return send(res, 200, privatePage);
  if (url.pathname === '/admin/settings' && req.method === 'POST') {
    const form = new URLSearchParams(await body(req));
    writes.push(`${form.get('action') ?? 'save'} ${form.get('name') ?? ''}`.trim());
    return send(
      res,
      200,
      page('Saved', `<h1>Done</h1><p>Action "${escapeHtml(form.get('action') ?? 'save')}" applied.</p>`),
    );
  }
  if (url.pathname === '/admin/settings') return send(res, 200, settingsPage);
  if (url.pathname === '/portal/refund' && req.method === 'POST') {
    const order = new URLSearchParams(await body(req)).get('order') ?? '?';
    writes.push(`refund ${order}`);
    return send(
      res,
      200,
      page('Refunded', `<h1>Refund issued</h1><p>Order ${escapeHtml(order)} was refunded.</p>`),
    );
  }
  if (url.pathname === '/portal/export')
    return send(
      res,
      200,
      page('Export', `<h1>Export ready</h1><p id="export">${orders.length} orders exported.</p>`),
    );
  if (url.pathname === '/portal/orders')
    return send(res, 200, ordersPage(Number(url.searchParams.get('page') ?? '1')));
  if (url.pathname === '/portal/orders.json') {
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.end(JSON.stringify(orders));
  }
  return send(res, 404, page('Not found', '<h1>Not found</h1>'));
}

function loggedIn(req: IncomingMessage, sessions: Set<string>): boolean {
  const sid = /(?:^|;\s*)sid=([0-9a-f]+)/.exec(req.headers.cookie ?? '')?.[1];
  return sid !== undefined && sessions.has(sid);
}

function safeNext(next: string | null): string {
  return next?.startsWith('/') && !next.startsWith('//') ? next : '/';
}

async function body(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) {
    text += String(chunk);
    if (text.length > 64 * 1024) break;
  }
  return text;
}

function send(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(html);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(title: string, content: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body>${content}</body></html>`;
}

const publicPage = page(
  'Acme intranet',
  `<h1>Acme intranet</h1><p>Welcome. Public notes: the cafeteria opens at 8.</p>
  <ul><li><a href="/wiki/private">Team roadmap (private)</a></li><li><a href="/admin/settings">Admin settings</a></li></ul>`,
);

function loginPage(next: string, error = ''): string {
  return page(
    'Sign in - Acme',
    `<h1>Sign in to continue</h1>${error ? `<p role="alert">${error}</p>` : ''}
    <form method="post" action="/login?next=${encodeURIComponent(next)}">
      <label>User name <input name="username" autocomplete="username"></label>
      <label>Password <input name="password" type="password" autocomplete="current-password"></label>
      <button type="submit">Sign in</button></form>`,
  );
}

const privatePage = page(
  'Team roadmap - Acme',
  `<h1>Team roadmap</h1><p>Private to the Acme team.</p>
  <table><tr><th>Quarter</th><th>Goal</th></tr><tr><td>Q3</td><td>Ship the billing rewrite</td></tr>
  <tr><td>Q4</td><td>Open the Berlin office</td></tr></table>`,
);

const settingsPage = page(
  'Admin settings - Acme',
  `<h1>Admin settings</h1>
  <form method="post"><label>Workspace name <input name="name" value="Acme"></label>
  <button name="action" value="save">Save</button>
  <button name="action" value="delete-workspace">Delete workspace</button></form>`,
);

/** The seller-center part of the demo: 12 orders, 5 to a page. */
const orders = Array.from({ length: 12 }, (_, index) => ({
  id: `A-${1001 + index}`,
  customer: ['Ada', 'Bo', 'Chen', 'Dara', 'Eli', 'Femi'][index % 6] ?? 'Ada',
  total: ((index + 1) * 12.5).toFixed(2),
  status: index % 3 === 0 ? 'shipped' : 'paid',
}));

function ordersPage(requested: number): string {
  const pages = Math.ceil(orders.length / 5);
  const current = Number.isInteger(requested) && requested >= 1 && requested <= pages ? requested : 1;
  const rows = orders
    .slice((current - 1) * 5, current * 5)
    .map(
      (order) =>
        `<tr class="order"><td class="id">${order.id}</td><td class="customer">${order.customer}</td>` +
        `<td class="total">${order.total}</td><td class="status">${order.status}</td>` +
        `<td><form method="post" action="/portal/refund"><input type="hidden" name="order" value="${order.id}">` +
        '<button class="refund">Refund</button></form></td></tr>',
    )
    .join('');
  const next =
    current < pages ? `<a class="next" href="/portal/orders?page=${current + 1}">Next page</a>` : '';
  return page(
    `Orders (page ${current}) - Acme seller center`,
    `<h1>Orders</h1><p class="summary">${orders.length} orders in all</p>
    <form action="/portal/export"><button id="export">Export CSV</button></form>
    <table><thead><tr><th>Order</th><th>Customer</th><th>Total</th><th>Status</th><th></th></tr></thead>
    <tbody>${rows}</tbody></table><nav>Page ${current} of ${pages} ${next}</nav>
    <script>${orderTools}</script>`,
  );
}

/**
 * The seller center's WebMCP tools, registered where the browser offers document.modelContext: agents reach
 * them through the tabward extension and relay, with the user's session (fetch carries the cookie).
 */
const orderTools = `
const context = document.modelContext;
if (context && context.registerTool) {
  const text = (value) => ({ content: [{ type: 'text', text: value }] });
  context.registerTool({
    name: 'listOrders',
    description: 'Orders of the Acme seller center: id, customer, total, status.',
    annotations: { readOnlyHint: true },
    inputSchema: { type: 'object', properties: { status: { type: 'string', enum: ['paid', 'shipped'] } }, additionalProperties: false },
    async execute(input) {
      const all = await (await fetch('/portal/orders.json')).json();
      return text(JSON.stringify(input.status ? all.filter((order) => order.status === input.status) : all));
    },
  });
  context.registerTool({
    name: 'refundOrder',
    description: 'Refund one order in full.',
    inputSchema: { type: 'object', properties: { order: { type: 'string', pattern: '^A-[0-9]{4}$' } }, required: ['order'], additionalProperties: false },
    async execute(input) {
      const response = await fetch('/portal/refund', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'order=' + encodeURIComponent(input.order) });
      return text(response.ok ? 'Order ' + input.order + ' refunded.' : 'The refund failed: HTTP ' + response.status);
    },
  });
}`;
