// The devtools tools (`--tools core,devtools`): console messages and network requests of a tab, read like a page
// (what they show is page content, marked untrusted, and taints by every sensitive page it came from), with
// credentials redacted (core/httpRedact.ts) before the secret redactor; and emulation, a write like resize_page
// (the user's own tabs ask). Names and arguments follow chrome-devtools-mcp's, which agents already know.

import { z } from 'zod';
import type { Body, ConsoleEntry, RequestEntry, TabLog } from '../browser/devtoolsLog.ts';
import { keptNavigations } from '../browser/devtoolsLog.ts';
import { emulate as emulateTab, networkPresets } from '../browser/emulation.ts';
import type { TrackedPage } from '../browser/pages.ts';
import { TabwardError } from '../core/errors.ts';
import { redactBody, redactHeader, redactUrl } from '../core/httpRedact.ts';
import { untrusted } from '../core/redact.ts';
import type { Secrets } from '../core/secrets.ts';
import { pageTarget, requireTab, runOnPage } from './common.ts';
import { defineTool, type ToolContext, type ToolResult, text } from './tool.ts';

const pageId = z.string().optional().describe('Tab id; default: the selected tab');
const listing = {
  pageId,
  pageSize: z.number().int().min(1).max(500).optional().describe('default 100'),
  pageIdx: z.number().int().min(0).optional(),
  includePreserved: z
    .boolean()
    .optional()
    .describe(`also the ${keptNavigations - 1} pages before`),
};
/** The most of one body or message shown. */
const shownChars = 10_000;
const lineChars = 200;

export const listConsoleMessages = defineTool({
  name: 'list_console_messages',
  description: 'Console messages and uncaught errors of a tab. Full text: get_console_message.',
  kind: 'read',
  schema: () =>
    z.object({ ...listing, types: z.array(z.string()).optional().describe('e.g. error, warning') }),
  target: (args, context) => pageTarget(context, args.pageId),
  handle: async (args, context, target) => {
    const tab = requireTab(target);
    const log = logOf(context, tab);
    const wanted = args.types?.map((type) => type.toLowerCase());
    const all = log
      .consoleEntries(args.includePreserved === true)
      .filter((entry) => !wanted || wanted.includes(entry.type));
    const { shown, header } = page(all, args, 'console message', tab);
    const clip = clipper(context.secrets);
    const lines = shown.map(
      (entry) =>
        `msgid=${entry.id}${earlier(log, entry)} [${entry.type}] ${clip(redactBody(entry.text))}${entry.source ? ` (${clip(redactUrl(entry.source))})` : ''}`,
    );
    return listed(header, lines, shown);
  },
});

export const getConsoleMessage = defineTool({
  name: 'get_console_message',
  description: 'One console message in full.',
  kind: 'read',
  schema: () => z.object({ msgid: z.number().int() }),
  target: (args, context) => pageTarget(context, holderOf(context, (log) => log.consoleEntry(args.msgid)).id),
  handle: async (args, context, target) => {
    const tab = requireTab(target);
    const entry = logOf(context, tab).consoleEntry(args.msgid);
    if (!entry) throw gone('Console message', args.msgid);
    // A page logging document.cookie or a request's parameters: credential pairs go as in a request body.
    const body = `[${entry.type}] ${redactBody(entry.text)}${entry.source ? `\nat ${redactUrl(entry.source)}` : ''}`;
    return {
      content: [text(`Console message ${entry.id} of tab ${tab.id}:\n${untrusted('', body)}`)],
      readUrls: entry.from,
    };
  },
});

export const listNetworkRequests = defineTool({
  name: 'list_network_requests',
  description: 'Network requests of a tab. Headers and bodies: get_network_request.',
  kind: 'read',
  schema: () =>
    z.object({
      ...listing,
      resourceTypes: z.array(z.string()).optional().describe('e.g. document, fetch, xhr, script'),
    }),
  target: (args, context) => pageTarget(context, args.pageId),
  handle: async (args, context, target) => {
    const tab = requireTab(target);
    const log = logOf(context, tab);
    const wanted = args.resourceTypes?.map((type) => type.toLowerCase());
    const all = log
      .requestEntries(args.includePreserved === true)
      .filter((entry) => !wanted || wanted.includes(entry.resourceType));
    const { shown, header } = page(all, args, 'request', tab);
    const clip = clipper(context.secrets);
    const lines = shown.map(
      (entry) => `reqid=${entry.id}${earlier(log, entry)} ${requestLine(entry, clip(redactUrl(entry.url)))}`,
    );
    return listed(header, lines, shown);
  },
});

export const getNetworkRequest = defineTool({
  name: 'get_network_request',
  description: 'One request: headers and bodies (credentials redacted).',
  kind: 'read',
  schema: () => z.object({ reqid: z.number().int() }),
  target: (args, context) => pageTarget(context, holderOf(context, (log) => log.requestEntry(args.reqid)).id),
  handle: async (args, context, target) => {
    const tab = requireTab(target);
    const log = logOf(context, tab);
    const entry = log.requestEntry(args.reqid);
    const details = await log.details(args.reqid, context.timeoutMs);
    if (!entry || !details) throw gone('Request', args.reqid);
    const { secrets } = context;
    const parts = [
      requestLine(entry, redactUrl(entry.url), true),
      headerLines('Request headers', details.requestHeaders),
      ...(details.requestBody ? [bodyLines('Request body', details.requestBody, secrets)] : []),
      ...(details.responseHeaders ? [headerLines('Response headers', details.responseHeaders)] : []),
      ...(details.responseBody ? [bodyLines('Response body', details.responseBody, secrets)] : []),
    ];
    // The body was composed by the page that sent it, and the answer came from the address asked.
    return {
      content: [text(`Request ${entry.id} of tab ${tab.id}:\n${untrusted('', parts.join('\n'))}`)],
      readUrls: [...entry.from, entry.url],
    };
  },
});

export const emulate = defineTool({
  name: 'emulate',
  description:
    'Emulate a viewport (and touch), user agent, network or CPU throttling, or color scheme in a tab.',
  kind: 'write',
  schema: () =>
    z.object({
      pageId,
      viewport: z
        .strictObject({
          width: z.number().int().min(200).max(7680),
          height: z.number().int().min(200).max(4320),
          hasTouch: z.boolean().optional(),
        })
        .optional(),
      userAgent: z.string().max(500).optional().describe('"" for the default'),
      networkConditions: z.enum(Object.keys(networkPresets) as [keyof typeof networkPresets]).optional(),
      cpuThrottlingRate: z.number().min(1).max(20).optional().describe('1 = off'),
      colorScheme: z.enum(['dark', 'light', 'auto']).optional(),
    }),
  // Every request of the tab carries the user agent it is given.
  carriesData: (args) => Boolean(args.userAgent),
  target: (args, context) => pageTarget(context, args.pageId),
  handle: async (args, { timeoutMs }, target) => {
    const tab = requireTab(target);
    const { pageId: _tab, ...request } = args;
    let state: Record<string, string> = {};
    const line = await runOnPage(tab, 'Emulating', timeoutMs, async () => {
      state = await emulateTab(tab, request, timeoutMs);
    });
    const now = Object.entries(state).map(([what, value]) => `${what} ${JSON.stringify(value)}`);
    return { content: [text(`Emulating: ${now.join(', ') || 'nothing'}. ${line}`)] };
  },
});

export const devtoolsTools = [
  listConsoleMessages,
  getConsoleMessage,
  listNetworkRequests,
  getNetworkRequest,
  emulate,
];

function logOf(context: ToolContext, tab: TrackedPage): TabLog {
  const log = context.session.devtools?.logOf(tab);
  if (!log)
    throw new TabwardError(
      'internal',
      `Tab ${tab.id} has no devtools record.`,
      'Start tabward with --tools devtools.',
    );
  return log;
}

/** The open tab whose record holds an entry: ids are unique across the session's tabs. */
function holderOf(context: ToolContext, has: (log: TabLog) => unknown): TrackedPage {
  const tab = context.session.pages.list().find((candidate) => {
    const log = context.session.devtools?.logOf(candidate);
    return log !== undefined && has(log) !== undefined;
  });
  if (!tab)
    throw new TabwardError(
      'not_found',
      'No open tab keeps that entry (each tab keeps its last 500, from its last 3 pages).',
      'List them again with list_console_messages or list_network_requests.',
    );
  return tab;
}

function gone(what: string, id: number): TabwardError {
  return new TabwardError('not_found', `${what} ${id} is no longer kept.`, 'List them again.');
}

function page<T>(
  all: readonly T[],
  args: { pageSize?: number | undefined; pageIdx?: number | undefined },
  noun: string,
  tab: TrackedPage,
): { shown: T[]; header: string } {
  const size = args.pageSize ?? 100;
  const pages = Math.max(1, Math.ceil(all.length / size));
  const index = Math.min(args.pageIdx ?? 0, pages - 1);
  const shown = all.slice(index * size, (index + 1) * size);
  const more = pages > 1 ? ` (pageIdx ${index} of 0-${pages - 1})` : '';
  const what = `${all.length} ${noun}${all.length === 1 ? '' : 's'} of tab ${tab.id}`;
  return { shown, header: `${what}${more}:` };
}

function listed(
  header: string,
  lines: string[],
  shown: readonly (ConsoleEntry | RequestEntry)[],
): ToolResult {
  const body = lines.length > 0 ? untrusted('', lines.join('\n')) : '(none)';
  return {
    content: [text(`${header}\n${body}`)],
    readUrls: [...new Set(shown.flatMap((entry) => entry.from))],
  };
}

function earlier(log: TabLog, entry: { navigation: number }): string {
  const back = log.navigation - entry.navigation;
  return back > 0 ? ` (${back} page${back > 1 ? 's' : ''} ago)` : '';
}

function requestLine(entry: RequestEntry, url: string, withStatusText = false): string {
  const statusText = withStatusText && entry.statusText ? ` ${entry.statusText}` : '';
  const outcome =
    entry.state === 'failed'
      ? `failed: ${entry.failure ?? 'unknown'}`
      : entry.status !== undefined
        ? `${entry.status}${statusText}`
        : 'pending';
  return `${entry.method} ${url} [${outcome}] ${entry.resourceType}`;
}

function headerLines(title: string, headers: readonly [string, string][]): string {
  const lines = headers.map(([name, value]) => `  ${name}: ${redactHeader(name, value)}`);
  return `${title}:\n${lines.join('\n') || '  (none)'}`;
}

/** Credentials and secret values out of the whole body first, then cut: no cut can split a secret. */
function bodyLines(title: string, body: Body, secrets: Secrets): string {
  if (body.text === undefined) return `${title} (${body.bytes} bytes): ${body.missing ?? 'not available'}`;
  const clean = secrets.redactor.text(redactBody(body.text));
  const shown =
    clean.length > shownChars
      ? `first ${shownChars} characters of ${body.bytes} bytes`
      : `${body.bytes} bytes`;
  return `${title} (${shown}):\n${clean.slice(0, shownChars)}`;
}

/** One line of a list, secret values redacted before it is cut (a cut must not leave half a secret). */
function clipper(secrets: Secrets): (value: string) => string {
  return (value) => {
    const line = secrets.redactor.text(value).replace(/\s*\n\s*/g, ' ⏎ ');
    return line.length > lineChars ? `${line.slice(0, lineChars)}…` : line;
  };
}
