// The three MCP servers under test, each pointed at the same Chromium, and how to drive each: the tool that
// navigates, the tool that snapshots, and what its element refs look like.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where Playwright MCP writes its snapshot files: not the checkout. */
const outputDir = mkdtempSync(join(tmpdir(), 'bench-playwright-mcp-'));

const bin = (pkg: string, file: string) =>
  fileURLToPath(new URL(`./node_modules/${pkg}/${file}`, import.meta.url));

export interface ServerUnderTest {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly navigate: (url: string) => { name: string; arguments: Record<string, unknown> };
  readonly snapshot: { name: string; arguments: Record<string, unknown> };
  /** The fewest calls that go to a page and show it to the agent (one model turn each). */
  readonly look: (url: string) => { name: string; arguments: Record<string, unknown> }[];
  /** A line of the snapshot that carries one of these can be acted on. */
  readonly ref: RegExp;
  /** The click on the element of this name in one of its snapshots (undefined: no such element shown). */
  readonly click: (
    snapshot: string,
    name: string,
  ) => { name: string; arguments: Record<string, unknown> } | undefined;
}

const escaped = (name: string) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** The first capture of `pattern` (made with the element's name) in a snapshot. */
const found = (snapshot: string, pattern: (name: string) => string, name: string) =>
  new RegExp(pattern(escaped(name))).exec(snapshot)?.[1];

export function servers(chrome: string): ServerUnderTest[] {
  return [
    {
      name: 'tabward',
      command: process.execPath,
      args: [
        fileURLToPath(new URL('../bin/tabward', import.meta.url)),
        'mcp',
        '--mode',
        'isolated',
        '--approval',
        'deny',
        '--executable-path',
        chrome,
      ],
      navigate: (url) => ({ name: 'navigate_page', arguments: { url } }),
      snapshot: { name: 'take_snapshot', arguments: {} },
      look: (url) => [{ name: 'navigate_page', arguments: { url, snapshot: true } }],
      ref: /@f?\d*e\d+/,
      click: (snapshot, name) => {
        // The name after the role, quoted or bare (tabward's snapshotFormat.ts shownName).
        const ref = found(
          snapshot,
          (n) =>
            `(?:"${n}"|(?:^|\\n)[ \\t]*(?:- )?(?:#+ )?\\S+ ${n}(?= (?:="|\\[|@|[/#?]|[a-z]+://)))[^\\n]*@(\\S+)`,
          name,
        );
        return ref ? { name: 'click', arguments: { ref } } : undefined;
      },
    },
    {
      name: 'chrome-devtools-mcp',
      command: process.execPath,
      args: [
        bin('chrome-devtools-mcp', 'build/src/bin/chrome-devtools-mcp.js'),
        '--headless',
        '--isolated',
        '--executablePath',
        chrome,
        '--chromeArg=--no-sandbox',
        '--usageStatistics=false',
        '--no-page-id-routing',
        '--performanceCrux=false',
      ],
      navigate: (url) => ({ name: 'navigate_page', arguments: { type: 'url', url } }),
      snapshot: { name: 'take_snapshot', arguments: {} },
      // Its input tools take includeSnapshot; navigate_page does not.
      look: (url) => [
        { name: 'navigate_page', arguments: { type: 'url', url } },
        { name: 'take_snapshot', arguments: {} },
      ],
      ref: /uid=\S+/,
      click: (snapshot, name) => {
        const uid = found(snapshot, (n) => `uid=(\\S+) \\w+ "${n}"`, name);
        return uid ? { name: 'click', arguments: { uid } } : undefined;
      },
    },
    {
      name: 'playwright-mcp',
      command: process.execPath,
      args: [
        bin('@playwright/mcp', 'cli.js'),
        '--headless',
        '--isolated',
        '--executable-path',
        chrome,
        '--no-sandbox',
        '--output-dir',
        outputDir,
      ],
      navigate: (url) => ({ name: 'browser_navigate', arguments: { url } }),
      snapshot: { name: 'browser_snapshot', arguments: {} },
      // Its navigate answers with a link to the page's snapshot, written to a file (measured on this version).
      look: (url) => [
        { name: 'browser_navigate', arguments: { url } },
        { name: 'browser_snapshot', arguments: {} },
      ],
      ref: /\[ref=\S+\]/,
      click: (snapshot, name) => {
        const ref = found(snapshot, (n) => `"${n}" \\[ref=([^\\]]+)\\]`, name);
        return ref ? { name: 'browser_click', arguments: { element: name, target: ref } } : undefined;
      },
    },
  ];
}
