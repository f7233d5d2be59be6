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

export async function startDemoSite(): Promise<DemoSite> {
  const sessions = new Set<string>();
  const writes: string[] = [];
  const server: Server = createServer((req, res) => {
    route(req, res, sessions, writes).catch(() => send(res, 500, page('Error', '<p>Server error</p>')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    origin: `http://${demoHost}:${port}`,
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
