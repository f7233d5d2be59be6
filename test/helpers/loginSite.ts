// A fixture intranet with a real login form and a private page, for the shared-mode and auto-mode tests.

import { randomBytes } from 'node:crypto';
import { type Fixture, html, redirect, startFixture } from './fixtureServer.ts';

export const loginHost = 'intranet.test';

export async function startLoginSite(): Promise<Fixture> {
  const sessions = new Set<string>();
  const signedIn = (cookie: string | undefined) => {
    const sid = /sid=(\w+)/.exec(cookie ?? '')?.[1];
    return sid !== undefined && sessions.has(sid);
  };
  return startFixture({
    '/': (_req, _body, res) =>
      html(res, '<title>Intranet</title><h1>Intranet home</h1><p>Public notice board.</p>'),
    'GET /login': (_req, _body, res) =>
      html(
        res,
        `<title>Sign in</title><h1>Sign in to continue</h1><form method="post"><label>User name <input name="username"></label>
         <label>Password <input type="password" name="password"></label><button>Sign in</button></form>`,
      ),
    'POST /login': (_req, body, res) => {
      const form = new URLSearchParams(body);
      if (form.get('username') !== 'alice' || form.get('password') !== 'pw-alice')
        return html(res, '<title>Sign in</title>Wrong', 401);
      const sid = randomBytes(8).toString('hex');
      sessions.add(sid);
      redirect(res, '/private', { 'set-cookie': `sid=${sid}; Path=/; HttpOnly` });
    },
    '/private': (req, _body, res) =>
      signedIn(req.headers.cookie)
        ? html(
            res,
            '<title>Private</title><h1>Private roadmap</h1><p>Secret plan: launch in May.</p><form method="post" action="/private/edit"><button>Edit plan</button></form>',
          )
        : redirect(res, '/login?next=/private'),
    'POST /private/edit': (_req, _body, res) => html(res, '<title>Edited</title><h1>Edited</h1>'),
  });
}
