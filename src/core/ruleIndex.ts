// Rules indexed by host, so that judging a URL looks at the few rules that can name its host instead of every
// rule: exact names by name, `*.name` by each suffix of the host, `name.*` by each label, and only the rules no
// host can index (`*`, names with `?`) scanned. Candidates are tried in the order the rules were given, so the
// first matching rule is the one a linear scan would find.

import type { UrlParts, UrlPattern } from './urlPattern.ts';

export class RuleIndex<R extends { readonly pattern: UrlPattern }> {
  private readonly exact = new Map<string, number[]>();
  private readonly suffix = new Map<string, number[]>();
  private readonly label = new Map<string, number[]>();
  private readonly unindexed: number[] = [];

  constructor(private readonly rules: readonly R[]) {
    rules.forEach((rule, at) => {
      const { host } = rule.pattern;
      if (host.kind === 'exact') add(this.exact, host.name, at);
      else if (host.kind === 'subdomains') add(this.suffix, host.name, at);
      else if (host.kind === 'labelAnySuffix') add(this.label, host.name, at);
      else this.unindexed.push(at);
    });
  }

  /** The rules that could match a URL with these parts, in their original order. */
  candidates(parts: UrlParts): R[] {
    const found: number[] = [...this.unindexed];
    const take = (list: readonly number[] | undefined) => {
      if (list) for (const at of list) found.push(at);
    };
    const { host } = parts;
    take(this.exact.get(host));
    const labels = host.split('.');
    for (let i = 0; i < labels.length; i++) {
      take(this.suffix.get(labels.slice(i).join('.')));
      // `name.*` needs a label after it; `*.name.*` may start at any label but the last.
      if (i < labels.length - 1) take(this.label.get(labels[i] ?? ''));
    }
    if (found.length > 1) found.sort((a, b) => a - b);
    const out: R[] = [];
    let last = -1;
    for (const at of found) {
      const rule = this.rules[at];
      if (at !== last && rule) out.push(rule);
      last = at;
    }
    return out;
  }
}

function add(map: Map<string, number[]>, key: string, at: number): void {
  const list = map.get(key);
  if (list) list.push(at);
  else map.set(key, [at]);
}
