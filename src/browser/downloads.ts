// Downloads of the agent's tabs (docs/architecture.md, "Downloads"): a file an agent action set off is kept in the
// session's own folder (0700, its files 0600), under the name the site suggested made safe, never over another file
// and never anywhere the agent or the page chooses; one over the size cap, past the count cap, or started by a page
// with no action of the agent's running in its tab (or just finished: an export the server takes a moment to make),
// is refused and said. The download's request itself was judged like any other at the choke point.

import {
  chmodSync,
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { basename, extname, join } from 'node:path';
import type { Download, Page } from 'playwright-core';
import { swallow } from '../core/debug.ts';
import { visibleText } from '../core/displayText.ts';

/** A tab as the keeper sees it (browser/pages.ts TrackedPage). */
export interface DownloadingTab {
  readonly id: string;
  readonly page: Page;
  readonly ownedByAgent: boolean;
  actedWithin(ms: number): boolean;
  downloads: DownloadKeeper | undefined;
}

export interface DownloadLimits {
  /** The folder files land in; made (0700) on the first download. */
  readonly folder: string;
  readonly maxBytes: number;
  readonly maxCount: number;
  /** How long after an action in a tab a download it set off still counts as the action's. */
  readonly afterActionMs: number;
}

export interface KeptDownload {
  readonly id: string;
  readonly tab: string;
  readonly url: string;
  /** The name the site suggested made safe; once saved, the file's own name in the folder. */
  name: string;
  state: 'saving' | 'saved' | 'refused' | 'failed';
  path?: string;
  bytes?: number;
  type?: string;
  /** The first lines of a text file (CSV, TSV, JSON, plain text). */
  preview?: string[];
  reason?: string;
  /** Settles once the file is saved or refused. */
  readonly done: Promise<void>;
}

const previewLines = 5;

export class DownloadKeeper {
  private readonly kept: KeptDownload[] = [];
  private nextId = 1;

  constructor(private readonly limits: DownloadLimits) {}

  get folder(): string {
    return this.limits.folder;
  }

  /** Every download of the tab from now on is kept or refused here. */
  watch(tab: DownloadingTab): void {
    tab.downloads = this;
    tab.page.on('download', (download) => this.take(tab, download));
  }

  /** How many downloads were seen so far: what a call's own downloads are counted from. */
  mark(): number {
    return this.kept.length;
  }

  /** The downloads of a tab since the mark, once each is saved or refused (bounded by `timeoutMs`). */
  async since(mark: number, tabId: string, timeoutMs: number): Promise<KeptDownload[]> {
    const mine = this.kept.slice(mark).filter((entry) => entry.tab === tabId);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(mine.map((entry) => entry.done)),
      new Promise((done) => {
        timer = setTimeout(done, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    return mine;
  }

  list(): readonly KeptDownload[] {
    return this.kept;
  }

  /**
   * A download taken at its response (browser/documentResponses.ts: the user's Chrome, where the browser's own
   * download folder is the user's): judged as any other, its body read within the cap and kept here.
   */
  async takeBody(
    tab: DownloadingTab,
    download: { url: string; suggested: string; read: (maxBytes: number) => Promise<Buffer | undefined> },
  ): Promise<void> {
    const entry = this.begin(tab, download.url, download.suggested);
    if (entry.state !== 'saving') return;
    try {
      const body = await download.read(this.limits.maxBytes);
      if (!body) {
        entry.state = 'refused';
        entry.reason = `it is over the size cap of ${formatBytes(this.limits.maxBytes)} (not read further)`;
      } else this.keep(entry, body.length, (path) => writeFileSync(path, body, { flag: 'wx', mode: 0o600 }));
    } catch (error) {
      entry.state = 'failed';
      entry.reason = error instanceof Error ? error.message : String(error);
    } finally {
      entry.finish();
    }
  }

  /** A new download of a tab: listed at once, and refused here already when it may not be kept. */
  private begin(tab: DownloadingTab, url: string, suggested: string): KeptDownload & { finish(): void } {
    let finish: () => void = () => undefined;
    const entry: KeptDownload & { finish(): void } = {
      id: `d${this.nextId++}`,
      tab: tab.id,
      url,
      name: safeName(suggested),
      state: 'saving',
      done: new Promise<void>((resolve) => {
        finish = resolve;
      }),
      finish: () => finish(),
    };
    this.kept.push(entry);
    const why = !tab.ownedByAgent
      ? "it is the user's tab"
      : !tab.actedWithin(this.limits.afterActionMs)
        ? 'the page started it by itself, with no action of the agent’s running in its tab'
        : this.kept.filter((each) => each.state === 'saved' || each.state === 'saving').length - 1 >=
            this.limits.maxCount
          ? `the session already keeps ${this.limits.maxCount} downloads (the count cap)`
          : undefined;
    if (why) {
      entry.state = 'refused';
      entry.reason = why;
      finish();
    }
    return entry;
  }

  /** The file written (by `write`, never over another) into the folder, its type sniffed, its first lines read. */
  private keep(entry: KeptDownload, bytes: number, write: (path: string) => void): void {
    mkdirSync(this.limits.folder, { recursive: true, mode: 0o700 });
    const path = freePath(this.limits.folder, entry.name);
    write(path);
    chmodSync(path, 0o600);
    const head = readHead(path, 64 * 1024);
    const type = sniffType(head, entry.name);
    Object.assign(entry, {
      state: 'saved',
      name: basename(path),
      path,
      bytes,
      type,
      ...previewOf(head, type),
    });
  }

  private take(tab: DownloadingTab, download: Download): void {
    const entry = this.begin(tab, download.url(), download.suggestedFilename());
    if (entry.state !== 'saving') {
      void download.cancel().catch(swallow('browser', 'downloads.take: download.cancel()'));
      return;
    }
    void this.save(entry, download)
      .catch((error: unknown) => {
        entry.state = 'failed';
        entry.reason = error instanceof Error ? error.message : String(error);
      })
      .finally(() => entry.finish());
  }

  private async save(entry: KeptDownload, download: Download): Promise<void> {
    // Playwright keeps the file in the browser's temporary profile until it is complete.
    const source = await download.path();
    const bytes = statSync(source).size;
    if (bytes > this.limits.maxBytes) {
      entry.state = 'refused';
      entry.reason = `${formatBytes(bytes)} is over the size cap of ${formatBytes(this.limits.maxBytes)}`;
      return;
    }
    // COPYFILE_EXCL: a file that appeared under that name meanwhile is never overwritten.
    this.keep(entry, bytes, (path) => copyFileSync(source, path, constants.COPYFILE_EXCL));
  }
}

/** A file name of the site's choosing made safe: no folders, no hidden files, no control characters, bounded. */
export function safeName(suggested: string): string {
  const base = basename(suggested.replaceAll('\\', '/'))
    .replace(/[\p{Cc}\p{Cf}/:*?"<>|]/gu, '_')
    .replace(/^\.+/, '')
    .trim()
    .slice(0, 120);
  return base || 'download';
}

/** NAME, else NAME (2).EXT, NAME (3).EXT…: never a file that is there. */
function freePath(folder: string, name: string): string {
  const ext = extname(name);
  const stem = name.slice(0, name.length - ext.length);
  for (let n = 1; ; n++) {
    const path = join(folder, n === 1 ? name : `${stem} (${n})${ext}`);
    if (!existsSync(path)) return path;
  }
}

function readHead(path: string, bytes: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    return buffer.subarray(0, readSync(fd, buffer, 0, bytes, 0));
  } finally {
    closeSync(fd);
  }
}

/**
 * The file's type from its first bytes, never from the site's headers: the formats an export comes in (CSV, TSV,
 * JSON, XLSX and other ZIPs, PDF, images) and plain text; anything else is binary.
 */
export function sniffType(head: Buffer, name: string): string {
  const starts = (...bytes: number[]) => bytes.every((byte, at) => head[at] === byte);
  if (starts(0x25, 0x50, 0x44, 0x46)) return 'application/pdf';
  if (starts(0x50, 0x4b, 0x03, 0x04))
    return head.includes('xl/')
      ? 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'
      : 'application/zip';
  if (starts(0x89, 0x50, 0x4e, 0x47)) return 'image/png';
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (starts(0x1f, 0x8b)) return 'application/gzip';
  if (head.includes(0)) return 'application/octet-stream';
  const text = head.toString('utf8');
  if (text.includes('\uFFFD')) return 'application/octet-stream';
  const trimmed = text.trimStart();
  if (/^[[{]/.test(trimmed) && looksLikeJson(trimmed)) return 'application/json';
  const lines = text
    .split(/\r?\n/)
    .filter((line) => line.length > 0)
    .slice(0, 5);
  const same = (sep: string) =>
    lines.length > 0 &&
    lines.every((line) => line.split(sep).length === (lines[0] ?? '').split(sep).length) &&
    (lines[0] ?? '').includes(sep);
  if (same('\t')) return 'text/tab-separated-values';
  if (same(',') || same(';') || extname(name).toLowerCase() === '.csv') return 'text/csv';
  return 'text/plain';
}

function looksLikeJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    // A file longer than the head read: its start at least opens a JSON value and holds a key or an item.
    return /^[[{]\s*("|\{|\[|\d|-|true|false|null|\])/.test(text);
  }
}

function previewOf(head: Buffer, type: string): { preview?: string[] } {
  if (!/^text\/|json/.test(type)) return {};
  const lines = head.toString('utf8').split(/\r?\n/).slice(0, previewLines);
  // The file's words on lines of their own: control and line-breaking characters shown as marks (a `\r`, U+2028).
  return { preview: lines.map((line) => visibleText(line, 200)) };
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} kB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** One line (and a preview) for the agent: what was kept where, or why not. */
export function describeDownload(entry: KeptDownload): string {
  if (entry.state === 'saved')
    return [
      `Downloaded ${entry.name} (${formatBytes(entry.bytes ?? 0)}, ${entry.type}) to ${entry.path} [${entry.id}, from ${entry.url}]`,
      ...(entry.preview
        ? ['First lines (file content, untrusted):', ...entry.preview.map((line) => `  ${line}`)]
        : []),
    ].join('\n');
  if (entry.state === 'saving')
    return `Downloading ${entry.name} [${entry.id}, from ${entry.url}]: not finished yet; list_downloads shows it once it is.`;
  return `Download of ${entry.name} ${entry.state === 'refused' ? 'refused' : 'failed'}: ${entry.reason} [${entry.id}, from ${entry.url}]`;
}
