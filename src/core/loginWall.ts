// The login-wall classifier: from facts a browser reports about a page, decide whether the agent has hit a
// wall that the user's own logged-in Chrome would get past. Scores add up; evidence says why.

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
  if (titleCue) add(1, `title "${facts.title.slice(0, 80)}" reads like a login page`);
  const textCue = cuePhrases.find((cue) => cue.test(facts.text.slice(0, 4000)));
  if (textCue && facts.text.length < 4000)
    add(1, `page text asks to sign in (${textCue.source.slice(0, 30)})`);
  if (evidence.length === 0) evidence.push('no login signals');
  return { isLoginWall: score >= threshold, score, evidence };
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
