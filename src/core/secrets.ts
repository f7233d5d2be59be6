// Secrets referenced by name. Only secrets the user declared exist: the lines of a --secrets file, and the
// environment variables named with --secret-env (any other variable, OPENAI_API_KEY or HOME, is not a secret the
// agent can type). A secret may be bound to the origins it belongs to (`NAME@https://login.example=value`);
// typing it anywhere else asks, and an unbound secret asks the first time on each new origin. Values are only
// ever typed into pages; everything an agent or a log sees has them redacted.

import { TabwardError } from './errors.ts';
import { Redactor } from './redact.ts';

export interface DeclaredSecret {
  readonly value: string;
  /** Origins the secret belongs to; empty: not bound, asks once per new origin. */
  readonly origins: readonly string[];
  /** Where the declaration came from, for messages: "the --secrets file", "--secret-env". */
  readonly source: string;
}

export type SecretPlacement = 'bound-here' | 'known-origin' | 'bound-elsewhere' | 'new-origin';

/** What every client of one tabward hides alike: the values added at run time (tokens), counted as they change. */
interface Redactions {
  readonly extra: string[];
  /** Literals any client typed into password fields: what the process's own records (no client's) hide. */
  readonly typedByAny: string[];
  changes: number;
}

export class Secrets {
  private readonly redactions: Redactions;
  /**
   * Literals this client's agent (or a recipe run) typed into password fields: this client's own, so that one agent
   * cannot hide another's page text by typing it (an attack review); shown in questions (Redactor.forQuestions).
   */
  private readonly typed: string[];
  /**
   * Passwords this client's pages hold, as its snapshots read them (the newest few): masked in every result and
   * record, as in the snapshot; a page's title, console, dialog or request body showed them (an attack review).
   */
  private page: readonly string[] = [];
  /** The redactor over all, made again when a value is added or forgotten (here or, for tokens, by any client). */
  private made:
    | { readonly redactor: Redactor; readonly changes: number; readonly typed: number; readonly page: string }
    | undefined;
  /** Origins a human approved for an unbound secret in this session (this client's: see forClient). */
  private readonly approvedOrigins = new Map<string, Set<string>>();

  constructor(
    private readonly declared: ReadonlyMap<string, DeclaredSecret> = new Map(),
    shared?: Redactions,
  ) {
    this.redactions = shared ?? { extra: [], typedByAny: [], changes: 0 };
    // The process's own Secrets (no client's copy) hides what any client typed: its records name no client.
    this.typed = shared ? [] : this.redactions.typedByAny;
  }

  get redactor(): Redactor {
    const { changes } = this.redactions;
    const page = this.page.join('\n');
    if (this.made?.changes !== changes || this.made.typed !== this.typed.length || this.made.page !== page) {
      const declared = [...this.declared.values()].map((secret) => secret.value);
      const redactor = new Redactor([...declared, ...this.redactions.extra], this.typed, this.page);
      this.made = { redactor, changes, typed: this.typed.length, page };
    }
    return this.made.redactor;
  }

  /**
   * The same secrets for one client of several (`mcp --http`): the same values, hidden alike from every client,
   * but the origins a human approved for an unbound secret, and the literals typed into password fields, are this
   * client's own. A yes given to one agent let another type the secret there unasked; a literal one agent typed hid
   * that text in every other's pages (two attack reviews).
   */
  forClient(): Secrets {
    return new Secrets(this.declared, this.redactions);
  }

  /** Names the user declared, for messages and status. */
  names(): string[] {
    return [...this.declared.keys()];
  }

  get(name: string): string {
    const secret = this.declared.get(name);
    if (!secret) {
      const known = this.names().join(', ') || 'none declared';
      throw new TabwardError(
        'bad_input',
        `Unknown secret "${name}" (declared: ${known}).`,
        'Declare it in the file given with --secrets, or name an environment variable with --secret-env.',
      );
    }
    return secret.value;
  }

  /** The declared secret whose value this is, exactly: a literal the agent typed that must be saved by name. */
  nameOf(value: string): string | undefined {
    for (const [name, secret] of this.declared) if (secret.value === value) return name;
    return undefined;
  }

  /** Whether typing the secret on `origin` is what the user declared (or already approved). */
  placement(
    name: string,
    origin: string,
    /** Where an unbound secret belongs by default (a recipe's own site). */
    fallbackOrigins: readonly string[] = [],
  ): { placement: SecretPlacement; boundTo: readonly string[] } {
    const secret = this.declared.get(name);
    const declared = secret?.origins ?? [];
    const boundTo = declared.length > 0 ? declared : fallbackOrigins;
    if (boundTo.length > 0)
      return { placement: boundTo.includes(origin) ? 'bound-here' : 'bound-elsewhere', boundTo };
    const known = this.approvedOrigins.get(name)?.has(origin) ?? false;
    return { placement: known ? 'known-origin' : 'new-origin', boundTo };
  }

  /**
   * These secrets and more, for one recipe run (its `secret: true` texts): one redactor and one placement rule
   * for both. The additions live only as long as the copy.
   */
  withMore(more: ReadonlyMap<string, DeclaredSecret>): Secrets {
    const combined = new Secrets(new Map([...this.declared, ...more]));
    for (const value of this.redactions.extra) combined.redactAlso(value);
    for (const value of this.typed) combined.redactTyped(value);
    return combined;
  }

  /** A human approved typing an unbound secret on this origin: later uses there do not ask again. */
  approveOrigin(name: string, origin: string): void {
    const set = this.approvedOrigins.get(name) ?? new Set<string>();
    set.add(origin);
    this.approvedOrigins.set(name, set);
  }

  /**
   * Whether a text the agent searches for is part of a secret (or holds one), compared on letters and digits
   * alone: a search that matches would tell the agent what the secret holds.
   */
  overlaps(text: string): boolean {
    const probe = lettersAndDigits(text);
    if (probe.length < 3) return false;
    return this.values().some((value) => {
      const secret = lettersAndDigits(value);
      return secret.length >= 3 && (secret.includes(probe) || probe.includes(secret));
    });
  }

  /** Another value that must never reach the agent (the approval page's token, for one). */
  redactAlso(value: string): void {
    this.redactions.extra.push(value);
    this.redactions.changes++;
  }

  /**
   * A literal typed into a password or one-time-code field: hidden from this client's records and results as a
   * secret is, shown in its questions (core/questionRedaction.ts).
   */
  redactTyped(value: string): void {
    if (!this.typed.includes(value)) this.typed.push(value);
    if (!this.redactions.typedByAny.includes(value)) {
      this.redactions.typedByAny.push(value);
      this.redactions.changes++;
    }
  }

  /**
   * Passwords a page of this client's holds (a snapshot read them): the newest few of six characters or more, so
   * that every result stays quick to redact; a literal the agent typed among them stays its own.
   */
  redactPage(values: readonly string[]): void {
    const fresh = values.filter((value) => value.length >= 6 && !this.typed.includes(value));
    const page = [...new Set([...fresh.slice(-maxPagePasswords), ...this.page])].slice(0, maxPagePasswords);
    if (page.join('\n') !== this.page.join('\n')) this.page = page;
  }

  /** Whether this client's agent typed this very value into a password field (redactTyped). */
  typedHere(value: string): boolean {
    return this.typed.includes(value);
  }

  /** A value that no longer needs hiding (a dead question's page token): the redactor stays as small as what is live. */
  forget(value: string): void {
    const at = this.redactions.extra.indexOf(value);
    if (at < 0) return;
    this.redactions.extra.splice(at, 1);
    this.redactions.changes++;
  }

  private values(): string[] {
    return [
      ...[...this.declared.values()].map((secret) => secret.value),
      ...this.redactions.extra,
      ...this.typed,
      ...this.page,
    ];
  }
}

/** Page passwords a client's redactor hides besides its snapshots' own masking (Secrets.redactPage). */
const maxPagePasswords = 12;

function lettersAndDigits(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');
}
