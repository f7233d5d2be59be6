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
