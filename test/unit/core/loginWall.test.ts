// The login-wall classifier on page facts (the e2e suite runs it on real fixture pages too).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyLoginWall, type LoginPageFacts } from '../../../src/core/loginWall.ts';

const page = (facts: Partial<LoginPageFacts>): LoginPageFacts => ({
  requestedUrl: 'https://app.example/dashboard',
  finalUrl: 'https://app.example/dashboard',
  status: 200,
  title: 'Dashboard',
  text: 'Welcome back',
  visiblePasswordFields: 0,
  forms: [],
  ...facts,
});
const loginForm = {
  action: '/session',
  hasPassword: true,
  hasUserField: true,
  isSearch: false,
  submitText: 'Sign in',
};

test('a redirect to a login form is a wall, with evidence', () => {
  const verdict = classifyLoginWall(
    page({
      finalUrl: 'https://app.example/login?next=%2Fdashboard',
      title: 'Sign in',
      visiblePasswordFields: 1,
      forms: [loginForm],
    }),
  );
  assert.ok(verdict.isLoginWall);
  assert.ok(verdict.evidence.some((line) => line.includes('password')));
  assert.ok(verdict.evidence.some((line) => line.includes('/login')));
});

test('401 and 403 pages are walls', () => {
  assert.ok(classifyLoginWall(page({ status: 401, title: 'Unauthorized', text: '' })).isLoginWall);
  assert.ok(classifyLoginWall(page({ status: 403, title: 'Forbidden', text: '' })).isLoginWall);
});

test('an SSO redirect to an identity provider is a wall', () => {
  const verdict = classifyLoginWall(
    page({
      finalUrl: 'https://sso.corp.example/oauth2/authorize?redirect_uri=x',
      title: 'Corp SSO',
      text: 'Sign in with your corporate account',
    }),
  );
  assert.ok(verdict.isLoginWall, verdict.evidence.join('; '));
});

test('"sign in to continue" interstitials, English and Chinese', () => {
  const english = page({
    finalUrl: 'https://wiki.example/auth/continue',
    requestedUrl: 'https://wiki.example/page',
    title: 'Sign in to continue',
    text: 'Sign in to continue to Wiki',
  });
  assert.ok(classifyLoginWall(english).isLoginWall);
  const chinese = page({
    finalUrl: 'https://docs.example.cn/login',
    requestedUrl: 'https://docs.example.cn/doc/1',
    title: '登录',
    text: '请登录后继续访问',
  });
  assert.ok(classifyLoginWall(chinese).isLoginWall);
});

test('a search box or a newsletter field is not a wall', () => {
  const search = page({
    title: 'Docs',
    text: 'Search the docs. Log in for more.',
    forms: [{ ...loginForm, hasPassword: false, isSearch: true }],
  });
  assert.ok(!classifyLoginWall(search).isLoginWall);
  const newsletter = page({
    title: 'Blog',
    text: 'Subscribe to our newsletter',
    forms: [{ ...loginForm, hasPassword: false, submitText: 'Subscribe' }],
  });
  assert.ok(!classifyLoginWall(newsletter).isLoginWall);
  assert.deepEqual(classifyLoginWall(page({})).evidence, ['no login signals']);
});

// Pages a PaiCLI user's model would have read as "log in first", which answer 200 and carry no form.
test('"you need access" pages at status 200 are walls, in English and Chinese', () => {
  const walls: Record<string, Partial<LoginPageFacts>> = {
    'Google Docs': {
      finalUrl: 'https://docs.google.com/document/d/1abc/edit',
      title: 'Google Docs',
      text: 'You need access\nAsk for access, or switch to an account with access. Learn more\nRequest access',
    },
    Notion: {
      finalUrl: 'https://www.notion.so/acme/Roadmap-0f1e',
      title: 'Notion',
      text: 'No access to this page\nLog in with a different account, or ask the owner to share it.\nRequest access',
    },
    飞书文档: {
      finalUrl: 'https://acme.feishu.cn/docx/AbC',
      title: '飞书云文档',
      text: '你没有访问权限\n请联系文档所有者，或切换账号\n申请权限',
    },
    腾讯文档: {
      finalUrl: 'https://docs.qq.com/doc/DAbc',
      title: '腾讯文档',
      text: '暂无权限访问此文档\n请求访问',
    },
  };
  for (const [name, facts] of Object.entries(walls)) {
    const verdict = classifyLoginWall(page(facts));
    assert.ok(verdict.isLoginWall, `${name}: ${verdict.evidence.join('; ')}`);
    assert.ok(
      verdict.evidence.some((line) => line.startsWith('the page says')),
      name,
    );
  }
});

test("GitHub's 404 for a private repository seen logged out is a wall; a 404 elsewhere is not", () => {
  const github = page({
    requestedUrl: 'https://github.com/acme/private-repo',
    finalUrl: 'https://github.com/acme/private-repo',
    status: 404,
    title: 'Page not found · GitHub',
    text: 'Skip to content\nSign in\nSign up\n404 "This is not the web page you are looking for"',
  });
  const verdict = classifyLoginWall(github);
  assert.ok(verdict.isLoginWall, verdict.evidence.join('; '));
  assert.ok(verdict.evidence.some((line) => line.includes('private repositories')));
  const blog = page({
    ...github,
    finalUrl: 'https://blog.example/missing',
    requestedUrl: 'https://blog.example/missing',
  });
  assert.ok(!classifyLoginWall(blog).isLoginWall);
});

test('QR-code-only logins are walls, in English and Chinese; a QR code for an app download is not', () => {
  const walls = [
    page({
      finalUrl: 'https://web.whatsapp.com/',
      title: 'WhatsApp',
      text: 'Steps to log in\n1. Open WhatsApp on your phone\n2. Scan the QR code',
      qrCodes: 1,
    }),
    page({
      finalUrl: 'https://wx.qq.com/',
      title: '微信网页版',
      text: '使用手机微信扫一扫登录',
      qrCodes: 1,
    }),
    page({
      finalUrl: 'https://login.dingtalk.com/oauth2/challenge.htm',
      title: '钉钉',
      text: '扫码登录\n请使用钉钉扫描二维码',
    }),
  ];
  for (const facts of walls) {
    const verdict = classifyLoginWall(facts);
    assert.ok(verdict.isLoginWall, `${facts.title}: ${verdict.evidence.join('; ')}`);
    assert.ok(verdict.evidence.some((line) => line.includes('QR code')));
  }
  const download = page({ title: 'Get the app', text: 'Download our app for iOS and Android.', qrCodes: 1 });
  assert.ok(!classifyLoginWall(download).isLoginWall);
});

test('a page that mentions access or a QR code in passing is not a wall', () => {
  for (const text of [
    'Pricing: no access fees, cancel any time.',
    'Our QR code menu: point your camera at the table card.',
    '本页介绍如何申请 API 的访问。',
  ])
    assert.ok(!classifyLoginWall(page({ text })).isLoginWall, text);
});
