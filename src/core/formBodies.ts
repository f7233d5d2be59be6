// Whether a form's submission carries what its question showed (docs/architecture.md "Consent", "Shown whole and
// exactly"): the fields the element's facts read as the browser builds them (browser/elements.ts), against the body
// the hook saw, for each encoding a form posts in. A pass lets a form's write through only when they agree
// (actionPasses.ts): a field the page changed or added as the form submitted (its submit or formdata handler) makes
// another body, held and asked as it is.

/** How a form posts its fields: the three encodings HTML forms have. */
export type FormEncoding = 'urlencoded' | 'multipart' | 'plain';

/** A form as its question showed it: its encoding and its fields (a file as "(a file: NAME, SIZE bytes)"). */
export interface ShownForm {
  readonly sendsAs: FormEncoding;
  readonly fields: readonly (readonly [string, string])[];
  /** The seal of each value shown as `passwordNotShown`, by the field's index (Effect.sealed). */
  readonly sealed?: readonly (string | undefined)[];
  /** The charset a URL-encoded body is in, where not UTF-8 (Effect.charset). */
  readonly charset?: string;
}

/**
 * What a form's question shows for a password's value (browser/elements.ts), and for a field holding one: never
 * shown, since whoever can run `tabward approvals` reads the question. It is bound all the same, by its seal.
 */
export const passwordNotShown = '(a password, not shown)';

/**
 * A value's seal (browser/passwordSeals.ts: an HMAC under a key of the process's), by which a password's value binds
 * an approval without being kept: a page that put an SSH key in a password field, shown as a password, cannot swap
 * another in once the human said yes.
 */
export type Seal = (value: string) => string;

/** Line breaks as the browser sends them in a form (CR LF) and as a page holds them (LF): one and the same. */
const lines = (text: string) => text.replace(/\r\n?/g, '\n');

/** The fields a body carries, in order, or undefined when it cannot be read as that encoding. */
function sentFields(
  sendsAs: FormEncoding,
  body: string,
  charset: string | undefined,
): [string, string][] | undefined {
  if (sendsAs === 'urlencoded') return charset ? decodedIn(body, charset) : [...new URLSearchParams(body)];
  if (sendsAs === 'plain')
    return body
      .split('\r\n')
      .filter((line, index, all) => line !== '' || index < all.length - 1)
      .map((line) => {
        const at = line.indexOf('=');
        return at < 0 ? [line, ''] : [line.slice(0, at), line.slice(at + 1)];
      });
  // A form with no fields sends nothing, or (multipart) only its closing boundary.
  if (body === '' || /^--[^\r\n]+--(\r\n)?$/.test(body)) return [];
  const boundary = /^--([^\r\n]+)\r\n/.exec(body)?.[1];
  if (!boundary) return undefined;
  const parts = body.split(`--${boundary}`).slice(1, -1);
  const fields: [string, string][] = [];
  for (const part of parts) {
    const headEnd = part.indexOf('\r\n\r\n');
    if (headEnd < 0) return undefined;
    const head = part.slice(0, headEnd);
    const value = part.slice(headEnd + 4).replace(/\r\n$/, '');
    // Chromium writes a quote and line breaks in a name as %22, %0D, %0A.
    const decode = (text: string) => text.replace(/%22/g, '"').replace(/%0D/gi, '\r').replace(/%0A/gi, '\n');
    const name = /; name="([^"]*)"/.exec(head)?.[1];
    const filename = /; filename="([^"]*)"/.exec(head)?.[1];
    if (name === undefined) return undefined;
    fields.push([decode(name), filename === undefined ? value : `(a file: ${decode(filename)}`]);
  }
  return fields;
}

/** A URL-encoded body in another charset than UTF-8, its bytes read in it; undefined for a charset unknown here. */
function decodedIn(body: string, charset: string): [string, string][] | undefined {
  let decoder: { decode(input: Uint8Array): string };
  try {
    decoder = new TextDecoder(charset);
  } catch {
    return undefined;
  }
  const decode = (text: string) => {
    const bytes: number[] = [];
    const plain = text.replace(/\+/g, ' ');
    for (let at = 0; at < plain.length; at++) {
      const hex = plain[at] === '%' ? plain.slice(at + 1, at + 3) : '';
      if (/^[0-9a-fA-F]{2}$/.test(hex)) {
        bytes.push(Number.parseInt(hex, 16));
        at += 2;
      } else bytes.push(plain.charCodeAt(at) & 0xff);
    }
    return decoder.decode(new Uint8Array(bytes));
  };
  if (body === '') return [];
  return body.split('&').map((pair) => {
    const at = pair.indexOf('=');
    return at < 0 ? [decode(pair), ''] : [decode(pair.slice(0, at)), decode(pair.slice(at + 1))];
  });
}

/** Whether `body` carries exactly the fields `shown`, in order (a file by its name). */
export function carriesShownForm(shown: ShownForm, body: string | undefined, seal?: Seal): boolean {
  if (body === undefined) return false;
  const sent = sentFields(shown.sendsAs, body, shown.charset);
  if (!sent || sent.length !== shown.fields.length) return false;
  return shown.fields.every(([name, value], index) => {
    const [sentName, sentValue] = sent[index] ?? ['', ''];
    if (lines(sentName) !== lines(name)) return false;
    // A password is shown as one, its value bound by its seal (none to check it with: not carried); one whose
    // value could not be read (a file in a password's place) is bound by its name alone.
    if (value === passwordNotShown) {
      const sealed = shown.sealed?.[index];
      if (sealed === undefined) return true;
      return seal !== undefined && sealed === seal(lines(sentValue));
    }
    // A file is shown by name and size; its bytes (read by the hook as text) are matched by name.
    if (shown.sendsAs === 'multipart' && value.startsWith('(a file: ') && sentValue.startsWith('(a file: '))
      return value.startsWith(`${sentValue}, `);
    return lines(sentValue) === lines(value);
  });
}
