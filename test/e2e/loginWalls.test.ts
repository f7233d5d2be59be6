// The login-wall classifier on real pages in real Chromium: walls are reported with evidence, pages that
// merely have a search box or a newsletter field are not.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Fixture, html, redirect, startFixture } from '../helpers/fixtureServer.ts';
import { type McpUnderTest, startMcp } from '../helpers/mcpClient.ts';

const loginForm = (title: string, heading: string) =>
  `<title>${title}</title><h1>${heading}</h1><form method="post"><label>Email <input type="email" name="email"></label>
   <label>Password <input type="password" name="pw"></label><button>Continue</button></form>`;

describe('login walls on fixture pages', () => {
  let site: Fixture;
  let mcp: McpUnderTest;
  before(async () => {
    site = await startFixture({
      '/app/dashboard': (_req, _body, res) => redirect(res, '/login?next=%2Fapp%2Fdashboard'),
      '/login': (_req, _body, res) => html(res, loginForm('Log in · Example', 'Log in to Example')),
      '/sso-start': (_req, _body, res) =>
        redirect(res, site.url('sso.corp.test', '/oauth2/authorize?redirect_uri=https%3A%2F%2Fapp')),
      '/oauth2/authorize': (_req, _body, res) =>
        html(
          res,
          '<title>Corporate sign-on</title><p>Use your corporate account.</p><form><input name="user"><input type="password" name="p"><button>Next</button></form>',
        ),
      '/api-401': (_req, _body, res) =>
        html(res, '<title>401 Unauthorized</title><h1>Unauthorized</h1>', 401),
      '/forbidden': (_req, _body, res) => html(res, '<title>403</title><h1>Access denied</h1>', 403),
      '/doc/1': (_req, _body, res) => redirect(res, '/auth/continue?from=%2Fdoc%2F1'),
      '/auth/continue': (_req, _body, res) =>
        html(
          res,
          '<title>Sign in to continue</title><p>Sign in to continue to Docs.</p><a href="/login">Sign in</a>',
        ),
      '/wiki/zh': (_req, _body, res) => redirect(res, '/passport/login?goto=%2Fwiki%2Fzh'),
      '/passport/login': (_req, _body, res) =>
        html(res, '<title>登录</title><p>请登录后继续访问</p><button>扫码登录</button>'),
      // Status 200, no form: the pages PaiCLI's model read as "log in first".
      '/document/d/1abc/edit': (_req, _body, res) =>
        html(
          res,
          '<title>Google Docs</title><h1>You need access</h1><p>Ask for access, or switch to an account with access.</p><button>Request access</button>',
        ),
      '/acme/Roadmap': (_req, _body, res) =>
        html(
          res,
          '<title>Notion</title><h1>No access to this page</h1><p>Log in with a different account, or ask the owner.</p>',
        ),
      '/docx/zh': (_req, _body, res) =>
        html(
          res,
          '<title>飞书云文档</title><h1>你没有访问权限</h1><p>请联系文档所有者</p><button>申请权限</button>',
        ),
      '/qr': (_req, _body, res) =>
        html(
          res,
          '<title>WhatsApp</title><h1>Steps to log in</h1><ol><li>Open WhatsApp on your phone</li><li>Scan the QR code</li></ol><canvas aria-label="Scan this QR code to link a device" width="200" height="200"></canvas>',
        ),
      '/qr/zh': (_req, _body, res) =>
        html(
          res,
          '<title>微信网页版</title><p>使用手机微信扫一扫登录</p><img alt="二维码" width="160" height="160" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">',
        ),
      '/search': (_req, _body, res) =>
        html(
          res,
          '<title>Docs search</title><h1>Docs</h1><form role="search"><input type="search" name="q"><button>Search</button></form><a href="/login">Log in</a><p>Lots of content here.</p>',
        ),
      '/blog': (_req, _body, res) =>
        html(
          res,
          '<title>Blog</title><h1>Our blog</h1><p>Post text.</p><form><label>Email <input type="email" name="e"></label><button>Subscribe</button></form>',
        ),
    });
    mcp = await startMcp({ args: ['--mode', 'isolated'] });
  });
  after(async () => {
    await mcp?.close();
    await site?.close();
  });

  const open = async (path: string) =>
    (await mcp.call('navigate_page', { url: site.url('app.test', path) })).text;

  test('login forms, SSO redirects, 401/403 and sign-in interstitials in English and Chinese are walls', async () => {
    const walls: Record<string, RegExp> = {
      '/app/dashboard': /password field/,
      '/sso-start': /identity provider sso\.corp\.test|login path|password/,
      '/api-401': /HTTP 401/,
      '/forbidden': /HTTP 403/,
      '/doc/1': /Sign in to continue|login path/i,
      '/wiki/zh': /登录|login path/,
      '/document/d/1abc/edit': /the page says "You need access"/,
      '/acme/Roadmap': /the page says "No access"/,
      '/docx/zh': /the page says "你没有访问权限"/,
      '/qr': /log in by QR code.*a QR code is shown/,
      '/qr/zh': /log in by QR code.*a QR code is shown/,
    };
    for (const [path, evidence] of Object.entries(walls)) {
      const text = await open(path);
      assert.match(text, /Login wall: /, `${path}: ${text}`);
      assert.match(text, evidence, path);
    }
  });

  test("GitHub's 404 for a private repository, seen logged out, is a wall (github.com on a local TLS fixture)", async () => {
    const github = await startFixture(
      {
        '/acme/private-repo': (_req, _body, res) =>
          html(
            res,
            '<title>Page not found · GitHub</title><header><a href="/login">Sign in</a> <a href="/signup">Sign up</a></header><h1>404</h1><p>This is not the web page you are looking for.</p>',
            404,
          ),
      },
      { tls: true },
    );
    try {
      const text = (await mcp.call('navigate_page', { url: github.url('github.com', '/acme/private-repo') }))
        .text;
      assert.match(text, /Login wall: /, text);
      assert.match(text, /also for private repositories/);
    } finally {
      await github.close();
    }
  });

  test('a search box or a newsletter field is not a wall', async () => {
    for (const path of ['/search', '/blog']) {
      const text = await open(path);
      assert.doesNotMatch(text, /Login wall/, `${path}: ${text}`);
    }
  });
});
