// Redaction of credentials in HTTP traffic shown to the agent (the devtools reads): Cookie, Set-Cookie,
// Authorization and Proxy-Authorization values, any header, query parameter or body field whose name says it
// holds a credential (a token, a password, a session, an API key), whatever the page chose to call the rest.
// Secret values tabward holds are redacted on top of this by the Redactor, in every output.

import { redactionMark } from './redact.ts';

const credentialHeaders = new Set(['cookie', 'set-cookie', 'authorization', 'proxy-authorization']);

/** Names that hold a credential wherever they appear as part of a longer name (x-api-key, access_token). */
const credentialWords = [
  'password',
  'passwd',
  'passphrase',
  'passcode',
  'secret',
  'token',
  'apikey',
  'accesskey',
  'privatekey',
  'session',
  'csrf',
  'xsrf',
  'cookie',
  'credential',
  'signature',
  'cardnumber',
];

/** Short names that hold a credential only as a word of their own (otp, but not footprint). */
const credentialTokens = new Set(['pwd', 'pass', 'otp', 'pin', 'ssn', 'cvv', 'cvc', 'sid', 'key', 'jwt']);

/** Whether a header, parameter or field of this name holds a credential. */
export function isCredentialName(name: string): boolean {
  const lower = name.toLowerCase();
  if (credentialHeaders.has(lower)) return true;
  const squashed = lower.replace(/[^a-z0-9]/g, '');
  if (credentialWords.some((word) => squashed.includes(word))) return true;
  // "auth" (x-auth-token, authorization, oauth) but not "author".
  if (/auth(?!or(?!i[sz]))/.test(squashed)) return true;
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  return words.some((word) => credentialTokens.has(word));
}

/**
 * A header as it may be shown: the value of a credential header is replaced, its name kept. A URL inside another
 * header (Referer, Location, Content-Location, Refresh, HTTP/2's :path) loses its credential parameters as the
 * request's own URL does: a redirect to `/cb?access_token=…` showed the token in its Location.
 */
export function redactHeader(name: string, value: string): string {
  return isCredentialName(name) ? redactionMark : redactUrl(value);
}

/** A URL with the values of credential parameters (query and fragment) replaced. */
export function redactUrl(url: string): string {
  const start = url.search(/[?#]/);
  if (start < 0) return url;
  return url.slice(0, start) + redactPairs(url.slice(start));
}

/**
 * A request or response body with the values of credential fields replaced: `name=value` pairs (forms, query
 * strings), JSON members, and the parts of a multipart form. A body cut short still has its complete pairs
 * redacted.
 */
export function redactBody(body: string): string {
  return redactMultipart(redactJsonMembers(redactPairs(body)));
}

function redactPairs(text: string): string {
  return text.replace(/(^|[?&;#\s])([^=&;#?\s"]+)=([^&;#\s]*)/g, (whole, before: string, name: string) =>
    isCredentialName(safeDecode(name)) ? `${before}${name}=${redactionMark}` : whole,
  );
}

function redactJsonMembers(text: string): string {
  // A member's value: a string, a scalar, or an object or array with nothing nested (deeper ones are matched
  // member by member). Under a credential name the whole value goes; under another, its own members are looked at.
  const member =
    /"((?:[^"\\]|\\.)*)"(\s*:\s*)("(?:[^"\\]|\\.)*(?:"|$)|\{[^{}]*\}|\[[^[\]]*\]|[^,{}[\]\s"][^,}\]\s]*)/g;
  return text.replace(member, (_whole, name: string, colon: string, value: string) => {
    if (isCredentialName(jsonString(name))) return `"${name}"${colon}"${redactionMark}"`;
    const nested = value.startsWith('{') || value.startsWith('[');
    return `"${name}"${colon}${nested ? redactJsonMembers(value) : value}`;
  });
}

function redactMultipart(text: string): string {
  const part = /(name="([^"]*)"[^\r\n]*\r?\n(?:[^\r\n]+\r?\n)*\r?\n)([\s\S]*?)(?=\r?\n--|$)/gi;
  return text.replace(part, (whole, head: string, name: string) =>
    isCredentialName(name) ? `${head}${redactionMark}` : whole,
  );
}

/** A JSON member name as the reader gets it (`"p\\u0061ssword"` is "password"). */
function jsonString(raw: string): string {
  try {
    const decoded: unknown = JSON.parse(`"${raw}"`);
    return typeof decoded === 'string' ? decoded : raw;
  } catch {
    return raw;
  }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}
