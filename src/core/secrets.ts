// Secrets referenced by name. Values come from a --secrets dotenv file or the environment and are only ever
// typed into pages; everything an agent or a log sees has them redacted. Every value from the file is
// redacted from the start; an environment variable is redacted from the moment it is used as a secret.

import { TabwardError } from './errors.ts';
import { Redactor } from './redact.ts';

export class Secrets {
  private readonly used = new Map<string, string>();
  private current: Redactor;

  constructor(
    private readonly fileValues: ReadonlyMap<string, string>,
    private readonly env: Readonly<Record<string, string | undefined>> = {},
  ) {
    this.current = new Redactor(fileValues.values());
  }

  get redactor(): Redactor {
    return this.current;
  }

  get(name: string): string {
    const value = this.fileValues.get(name) ?? this.env[name];
    if (value === undefined || value === '') {
      const known = [...this.fileValues.keys()].join(', ') || 'none in the --secrets file';
      throw new TabwardError(
        'bad_input',
        `Unknown secret "${name}" (known: ${known}).`,
        'Define it in the environment or in the file given with --secrets.',
      );
    }
    if (!this.fileValues.has(name) && !this.used.has(name)) {
      this.used.set(name, value);
      this.current = new Redactor([...this.fileValues.values(), ...this.used.values()]);
    }
    return value;
  }
}
