// Gathers what the login-wall classifier needs from a tab: final URL, status, title, visible text, password
// fields, the shape of each form, and images that look like a QR code (for scan-to-log-in pages). Runs a small
// read-only script in the page under a deadline.

import type { LoginFormFact, LoginPageFacts } from '../core/loginWall.ts';
import { withDeadline } from './deadline.ts';
import type { TrackedPage } from './pages.ts';

interface InPageFacts {
  title: string;
  text: string;
  visiblePasswordFields: number;
  forms: LoginFormFact[];
  qrCodes: number;
}

export async function collectLoginFacts(
  tracked: TrackedPage,
  requestedUrl: string,
  timeoutMs: number,
): Promise<LoginPageFacts> {
  const inPage = await withDeadline(
    tracked.readInDocument<InPageFacts>(readFactsInPage),
    timeoutMs,
    'reading the page for a login wall',
    tracked.interrupted,
  );
  return {
    requestedUrl,
    finalUrl: tracked.page.url(),
    ...(tracked.status !== undefined ? { status: tracked.status } : {}),
    ...inPage,
  };
}

/**
 * Runs inside the page. Kept as source text because the Node tsconfig has no DOM types (docs/architecture.md "Source text run in pages"); the
 * e2e login-wall tests exercise it on real pages.
 */
const readFactsInPage = `(() => {
  const visible = (el) => {
    const box = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    return box.width > 0 && box.height > 0 && style.visibility !== 'hidden' && style.display !== 'none';
  };
  const passwords = [...document.querySelectorAll('input[type=password]')].filter(visible);
  const forms = [...document.querySelectorAll('form')].map((form) => {
    const inputs = [...form.querySelectorAll('input')];
    const types = inputs.map((input) => (input.getAttribute('type') || 'text').toLowerCase());
    const names = inputs.map((input) => (input.name + ' ' + input.id + ' ' + input.autocomplete).toLowerCase()).join(' ');
    const submit = form.querySelector('button, input[type=submit]');
    return {
      action: form.getAttribute('action') || '',
      hasPassword: types.includes('password'),
      hasUserField: types.includes('email') || /user|login|email|account|phone/.test(names),
      isSearch: form.getAttribute('role') === 'search' || types.includes('search'),
      submitText: ((submit && (submit.textContent || submit.getAttribute('value'))) || '').trim().slice(0, 60),
    };
  });
  const qrCodes = [...document.querySelectorAll('img, canvas, svg')].filter((el) => {
    if (!visible(el)) return false;
    const box = el.getBoundingClientRect();
    const named = /qr|二维码/i.test([el.id, el.getAttribute('class'), el.getAttribute('alt'), el.getAttribute('src'), el.getAttribute('aria-label')].join(' '));
    const square = box.width >= 80 && Math.abs(box.width - box.height) <= box.width * 0.1;
    return named || (square && el.tagName !== 'svg');
  }).length;
  return {
    qrCodes,
    title: document.title,
    text: ((document.body && document.body.innerText) || '').slice(0, 6000),
    visiblePasswordFields: passwords.length,
    forms,
  };
})()`;
