// Redaction of secret values. Secrets are referenced by name; their values must never reach an agent, a
// log or an error, in any encoding a page or URL might give them.

export const redactionMark = '«redacted»';

export class Redactor {
  private readonly needles: string[];
  private readonly patterns: RegExp[];
  /** With typed or page values: the declared and tokens alone (forQuestions), and all but the page's (knowsWhole). */
  private readonly split?: { readonly others: Redactor; readonly known: Redactor };

  /**
   * `typedValues` are literals the agent typed into password fields: hidden like the rest from results and
   * records, but not from questions (forQuestions), since a page may have chosen them. `pageValues` are passwords
   * a page holds (its password fields' values, as snapshots read them): hidden from results and records, not known
   * to the agent (knowsWhole), and not hidden from questions either: a page may have set them too (a password field
   * holding an attacker's account number masked that recipient in another tab's question).
   */
  constructor(
    secretValues: Iterable<string>,
    typedValues: Iterable<string> = [],
    pageValues: Iterable<string> = [],
  ) {
    const declared = [...secretValues];
    const typed = [...typedValues].filter((value) => !declared.includes(value));
    const page = [...pageValues].filter((value) => !declared.includes(value) && !typed.includes(value));
    if (typed.length > 0 || page.length > 0)
      this.split = {
        others: new Redactor(declared),
        known: new Redactor([...declared, ...typed]),
      };
    const forms = new Set<string>();
    const patterns: RegExp[] = [];
    for (const value of [...declared, ...typed, ...page]) {
      const spelled = spellings(value);
      for (const form of spelled.texts) forms.add(form);
      patterns.push(...spelled.patterns);
    }
    this.needles = [...forms].sort((a, b) => b.length - a.length);
    this.patterns = patterns;
  }

  get active(): boolean {
    return this.needles.length > 0;
  }

  text(input: string): string {
    let output = input;
    for (const needle of this.needles) output = output.split(needle).join(redactionMark);
    for (const pattern of this.patterns) output = output.replace(pattern, redactionMark);
    return output;
  }

  /**
   * The same redactor without the literals the agent typed into password fields and the pages' passwords: what a
   * question is redacted with (core/questionRedaction.ts). Masked there, a page that chose the text (told the agent
   * what to type, made a recipient's field a password field as it was typed into, set a password field to it) hid
   * the recipient a yes sent.
   */
  forQuestions(): Redactor {
    return this.split?.others ?? this;
  }

  /** Whether the agent knows this value whole: a declared secret's, a token's, or a literal it typed. */
  knowsWhole(value: string): boolean {
    return (this.split?.known ?? this).text(value) === redactionMark;
  }

  /** Redacts every string inside a JSON-like value. */
  value<T>(input: T): T {
    if (!this.active) return input;
    return this.walk(input) as T;
  }

  private walk(input: unknown): unknown {
    if (typeof input === 'string') return this.text(input);
    if (Array.isArray(input)) return input.map((item) => this.walk(item));
    if (input !== null && typeof input === 'object') {
      return Object.fromEntries(Object.entries(input).map(([key, inner]) => [key, this.walk(inner)]));
    }
    return input;
  }
}

/**
 * The forms a value is hidden in: texts to find as they are, and patterns. Also what a snapshot masks a page's
 * password in (browser/snapshot/snapshot.ts): a page holding it can show it so.
 */
export function spellings(value: string): { readonly texts: string[]; readonly patterns: RegExp[] } {
  if (value.length < 3) return { texts: [], patterns: [] }; // too short to hide without mangling ordinary text
  const forms = new Set<string>([value]);
  // The same text as a page may show it: another Unicode normal form, full-width, upper or lower case where case is
  // not one letter for one (ß → SS, İ → i̇).
  for (const shown of lookAlikes(value)) forms.add(shown);
  for (const encoded of percentEncodings(value))
    for (const spaced of [encoded, encoded.replace(/%20/g, '+')]) {
      forms.add(spaced);
      forms.add(spaced.replace(/%[0-9A-F]{2}/g, (percent) => percent.toLowerCase()));
    }
  forms.add(JSON.stringify(value).slice(1, -1));
  // A page that has the value can hand it back in another shape: reversed, encoded, spaced out.
  if (value.length < 6) return { texts: [...forms], patterns: [] };
  for (const form of encodedForms(value)) forms.add(form);
  return {
    texts: [...forms],
    patterns: [spacedOut(value), spacedOut([...value].reverse().join(''))],
  };
}

/**
 * The value as URLs and forms carry it: encodeURIComponent's, a browser's form encoding (which also escapes
 * `!'()~`, so a password with a `!` submitted by a form was shown as typed-in-the-clear), and encodeURI's (a path).
 */
function percentEncodings(value: string): string[] {
  const form = new URLSearchParams([['', value]]).toString().slice(1).replace(/\+/g, '%20');
  return [encodeURIComponent(value), form, encodeURI(value), ...latin1Form(value)];
}

/**
 * A form's encoding in a page of a legacy charset (windows-1252, latin1): each letter past ASCII one byte (%E4 for
 * "ä"), where UTF-8 takes two. Such a page's held post showed a typed password so (an attack review).
 */
function latin1Form(value: string): string[] {
  if (
    ![...value].some((char) => char.charCodeAt(0) > 0x7e) ||
    [...value].some((char) => char.charCodeAt(0) > 0xff)
  )
    return [];
  const unreserved = /[A-Za-z0-9*\-._]/;
  const bytes = [...value].map((char) =>
    unreserved.test(char) ? char : `%${char.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
  );
  return [bytes.join('')];
}

/** The value as a page may show the same text: normal forms, full-width, upper and lower case. */
function lookAlikes(value: string): string[] {
  const fullWidth = value.replace(/[!-~]/g, (char) => String.fromCharCode(char.charCodeAt(0) + 0xfee0));
  return [
    value.normalize('NFC'),
    value.normalize('NFD'),
    fullWidth,
    value.toUpperCase(),
    value.toLowerCase(),
  ];
}

/**
 * The value reversed, in hex, and in base64 (standard and URL-safe) at each of the three byte alignments it can
 * have inside a longer encoded text: the part of each encoding that does not depend on the bytes around it.
 */
function encodedForms(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const forms = [[...value].reverse().join(''), bytes.toString('hex'), bytes.toString('hex').toUpperCase()];
  for (let shift = 0; shift < 3; shift++) {
    const shifted = Buffer.concat([Buffer.alloc(shift), bytes]);
    const whole = Math.floor(shifted.length / 3) * 3;
    const encoded = shifted
      .subarray(0, whole)
      .toString('base64')
      .slice(shift > 0 ? 4 : 0);
    if (encoded.length < 8) continue;
    forms.push(encoded, encoded.replaceAll('+', '-').replaceAll('/', '_'));
  }
  return forms;
}

/**
 * The value's characters with up to three separators between each: anything but an ASCII letter or digit. Not
 * Unicode's letter and number classes: with the `iu` flags V8 takes ~45 ms of CPU to compile each such pattern
 * (two per secret, on the first call of every process); counting other letters as separators only redacts more.
 * A separator is never the character that follows it: otherwise a secret of repeated non-ASCII letters (or
 * punctuation) matched against a run of that letter backtracks exponentially and stalls the process.
 */
function spacedOut(value: string): RegExp {
  const chars = [...value].map((char) => char.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'));
  const pattern = chars.map((char, at) => (at === 0 ? char : `(?:(?!${char})[^0-9A-Za-z]){0,3}${char}`));
  return new RegExp(pattern.join(''), 'giu');
}

/** Marks page content as data from the page, not instructions; the closing marker cannot be forged. */
export function untrusted(origin: string, content: string): string {
  const safe = content.replace(/<\/?untrusted[^>]*>/gi, '[marker removed]');
  return `<untrusted${origin ? ` origin="${origin}"` : ''}>\n${safe}\n</untrusted>`;
}
