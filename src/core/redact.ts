// Redaction of secret values. Secrets are referenced by name; their values must never reach an agent, a
// log or an error, in any encoding a page or URL might give them.

export const redactionMark = '«redacted»';

export class Redactor {
  private readonly needles: string[];

  constructor(secretValues: Iterable<string>) {
    const forms = new Set<string>();
    for (const value of secretValues) {
      if (value.length < 3) continue; // too short to hide without mangling ordinary text
      forms.add(value);
      forms.add(encodeURIComponent(value));
      forms.add(encodeURIComponent(value).replace(/%20/g, '+'));
      forms.add(JSON.stringify(value).slice(1, -1));
    }
    this.needles = [...forms].sort((a, b) => b.length - a.length);
  }

  get active(): boolean {
    return this.needles.length > 0;
  }

  text(input: string): string {
    let output = input;
    for (const needle of this.needles) output = output.split(needle).join(redactionMark);
    return output;
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

/** Marks page content as data from the page, not instructions; the closing marker cannot be forged. */
export function untrusted(origin: string, content: string): string {
  const safe = content.replace(/<\/?untrusted[^>]*>/gi, '[marker removed]');
  return `<untrusted${origin ? ` origin="${origin}"` : ''}>\n${safe}\n</untrusted>`;
}
