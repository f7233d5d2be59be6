// bench/results.md is made of sections, each between `<!-- NAME -->` and `<!-- /NAME -->`, written by the bench
// that measured it; the notes between them are written by hand and kept. A bench replaces its own section only.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const file = new URL('./results.md', import.meta.url);

/** Replaces the section `name` in bench/results.md (added at the end, or at the top with `atTop`, if absent). */
export function writeResultsSection(name: string, content: string, atTop = false): void {
  const start = `<!-- ${name} -->`;
  const end = `<!-- /${name} -->`;
  const section = `${start}\n${content.trim()}\n${end}`;
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const from = current.indexOf(start);
  const to = current.indexOf(end);
  const next =
    from >= 0 && to > from
      ? `${current.slice(0, from)}${section}${current.slice(to + end.length)}`
      : atTop
        ? `${section}\n\n${current}`
        : `${current.trimEnd()}\n\n${section}\n`;
  writeFileSync(file, next);
}
