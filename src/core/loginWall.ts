// The login-wall classifier: from facts a browser reports about a page, decide whether the agent has hit a
// wall that the user's own logged-in Chrome would get past. Scores add up; evidence says why. Besides login forms
// and redirects: pages that answer 200 (or a code host's 404) saying the visitor has no access (Google Docs' "You
// need access", Notion's "No access", GitHub's 404 for a private repository seen logged out), and logins by QR code
// alone (WeChat, Alipay, DingTalk, Feishu, WhatsApp Web), in English and Chinese.

import { quotedForDisplay } from './displayText.ts';

export interface LoginFormFact {
  readonly action: string;
  readonly hasPassword: boolean;
  readonly hasUserField: boolean;
  readonly isSearch: boolean;
  readonly submitText: string;
}

export interface LoginPageFacts {
  readonly requestedUrl: string;
  readonly finalUrl: string;
  /** HTTP status of the main document, when known. */
  readonly status?: number;
  readonly title: string;
  /** Visible text, trimmed to a few thousand characters by the caller. */
  readonly text: string;
  readonly visiblePasswordFields: number;
  readonly forms: readonly LoginFormFact[];
  /** Visible images or canvases that look like a QR code (square, or named so); absent when not measured. */
  readonly qrCodes?: number;
}

export interface LoginWallVerdict {
  readonly isLoginWall: boolean;
  readonly score: number;
  readonly evidence: readonly string[];
}

const threshold = 3;

const loginPath =
  /(^|[/_.-])(log-?in|sign-?in|signon|sso|auth|oauth2?|authorize|session|passport|cas)([/_.-]|$)/i;
const returnParam =
  /[?&](next|return_?to|redirect(_uri|_url)?|continue|callback|service|from|goto|backurl)=/i;
const identityHosts =
  /^(accounts\.google\.com|login\.microsoftonline\.com|login\.live\.com|github\.com|gitlab\.com|.*\.okta\.com|.*\.auth0\.com|sso\..*|login\..*|auth\..*|passport\..*|id\..*)$/i;

const cuePhrases = [
  /\bsign[ -]?in\b/i,
  /\blog[ -]?in\b/i,
  /\bplease (log|sign) in\b/i,
  /\b(you must|you need to) (be )?(logged|signed) in\b/i,
  /\bsign in to continue\b/i,
  /\bauthentication required\b/i,
  /登录|登入|請登入|请登录|扫码登录|账号密码|帐号/,
  /\banmelden\b|\bconnexion\b|\biniciar sesión\b|ログイン|로그인/i,
];

/** The page says the visitor lacks access: a login (or another account) would get past it. */
const noAccessPhrases = [
  /\byou (need|don['’]t have|do not have|have no) (access|permission)\b/i,
  /\bno access\b/i,
  /\baccess (denied|restricted)\b/i,
  /\bpermission denied\b/i,
  /\b(this|the) (page|document|file|workspace|repository|project) is private\b/i,
  /没有(访问)?权限|无权(访问|查看)|暂无(访问)?权限|需要(访问)?权限|申请(访问)?权限|请求访问|无法访问此(页面|文档)|没有此(页面|文档)的权限|你没有.*权限|您没有.*权限/,
];

/** An offer to get past it: sign in, switch accounts, ask the owner. */
const wayInPhrases = [
  /\bswitch (to )?(an(other)? |a different )?account\b/i,
  /\b(log|sign) ?in with (a|another) (different )?account\b/i,
  /\b(request|ask for) access\b/i,
  /切换(账号|帐号|账户)|申请(访问)?权限|请求访问/,
];

/** Scan-to-log-in: often no form and no password field at all. */
const qrPhrases = [
  /\bscan (the |this )?QR ?code\b/i,
  /\bQR ?code (to )?(log|sign) ?in\b/i,
  /\b(log|sign) ?in with (a |the )?QR ?code\b/i,
  /扫码登录|扫码登入|扫一扫登录|扫描二维码|二维码登录|扫一扫|用手机.*扫/,
];

/** Code hosts answer 404, not 403, for a private repository to a visitor who is not signed in. */
const hidesPrivateAs404 = /^(www\.)?(github\.com|gitlab\.com|bitbucket\.org|gitee\.com)$/i;
const notFound = /\b(page not found|not found|404)\b|页面不存在|找不到(页面|该页面)|404/i;

export function classifyLoginWall(facts: LoginPageFacts): LoginWallVerdict {
  const evidence: string[] = [];
  let score = 0;
  const add = (points: number, why: string) => {
    score += points;
    evidence.push(`${why} (+${points})`);
  };
  if (facts.status === 401) add(3, 'HTTP 401 Unauthorized');
  if (facts.status === 403) add(3, 'HTTP 403 Forbidden');
  urlSignals(facts, add);
  const loginForms = facts.forms.filter((form) => form.hasPassword && !form.isSearch);
  if (facts.visiblePasswordFields > 0) add(3, `${facts.visiblePasswordFields} visible password field(s)`);
  if (loginForms.some((form) => form.hasUserField)) add(1, 'a form with a user name and a password');
  const titleCue = cuePhrases.find((cue) => cue.test(facts.title));
  if (titleCue) add(1, `title ${quotedForDisplay(facts.title, 80)} reads like a login page`);
  const textCue = cuePhrases.find((cue) => cue.test(facts.text.slice(0, 4000)));
  if (textCue && facts.text.length < 4000)
    add(1, `page text asks to sign in (${textCue.source.slice(0, 30)})`);
  accessSignals(facts, add);
  if (evidence.length === 0) evidence.push('no login signals');
  return { isLoginWall: score >= threshold, score, evidence };
}

/** "You need access" pages, a code host's 404 for a private repository, and QR-code-only logins. */
function accessSignals(facts: LoginPageFacts, add: (points: number, why: string) => void): void {
  const short = facts.text.length < 4000;
  const seen = `${facts.title}\n${short ? facts.text : ''}`;
  const noAccess = noAccessPhrases.map((phrase) => phrase.exec(seen)?.[0]).find(Boolean);
  // The page's own words, quoted so that they cannot close the quotes or break the evidence line.
  if (noAccess) add(2, `the page says ${quotedForDisplay(noAccess, 80)}`);
  const wayIn = wayInPhrases.map((phrase) => phrase.exec(seen)?.[0]).find(Boolean);
  if (wayIn) add(1, `it offers ${quotedForDisplay(wayIn, 80)}`);
  const qr = qrPhrases.map((phrase) => phrase.exec(seen)?.[0]).find(Boolean);
  if (qr) add(2, `it asks to log in by QR code (${quotedForDisplay(qr, 80)})`);
  if ((facts.qrCodes ?? 0) > 0 && (qr || cuePhrases.some((cue) => cue.test(seen))))
    add(1, 'a QR code is shown for logging in');
  const final = safeUrl(facts.finalUrl);
  const missing = facts.status === 404 || notFound.test(facts.title);
  if (final && missing && hidesPrivateAs404.test(final.hostname) && /\bsign ?in\b/i.test(seen))
    add(
      2,
      `${final.hostname} answers "not found" to visitors who are not signed in, also for private repositories`,
    );
}

function urlSignals(facts: LoginPageFacts, add: (points: number, why: string) => void): void {
  const requested = safeUrl(facts.requestedUrl);
  const final = safeUrl(facts.finalUrl);
  if (!final) return;
  const redirected = requested !== undefined && requested.href !== final.href;
  if (loginPath.test(final.pathname)) add(redirected ? 2 : 1, `URL path ${final.pathname} is a login path`);
  if (redirected && returnParam.test(final.search)) add(1, 'redirected with a return-to parameter');
  if (redirected && requested.host !== final.host && identityHosts.test(final.hostname)) {
    add(1, `redirected to the identity provider ${final.hostname}`);
  }
}

function safeUrl(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}
