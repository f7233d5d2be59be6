// The WebMCP tools a tab registers on document.modelContext (Chromium's own with --enable-features=WebMCP, or a
// polyfill such as @mcp-b/global), read and run from tabward itself: no extension, no relay. Only plain data
// crosses: each tool's name, description, schema and read-only hint after a JSON round trip (native tool objects
// carry a window). A call runs only on the definition that was judged, and fails as soon as the page withdraws or
// replaces its tool mid-call (native Chrome lets such a call hang on), saying the outcome is unknown.

import type { SiteTool } from '../protocol/siteTools.ts';
import { maxResultBytes, maxToolBytes, maxToolsPerPage, siteToolNamePattern } from '../protocol/siteTools.ts';
import { translateBrowserError, withDeadline } from './deadline.ts';
import type { TrackedPage } from './pages.ts';

/** In the page: a tool as plain JSON text (the same text for the same definition), or null when it is odd. */
const describeSource = `(t) => {
  try {
    if (!t || typeof t.name !== 'string' || !t.name) return null;
    const schema = typeof t.inputSchema === 'string' ? JSON.parse(t.inputSchema) : t.inputSchema;
    const text = JSON.stringify({
      name: t.name,
      description: typeof t.description === 'string' ? t.description : '',
      inputSchema: schema && typeof schema === 'object' ? schema : { type: 'object', properties: {} },
      readOnly: !!(t.annotations && t.annotations.readOnlyHint === true),
    });
    return text.length > ${maxToolBytes} ? null : text;
  } catch { return null; }
}`;

const listSource = `async () => {
  const context = document.modelContext;
  if (!context || typeof context.getTools !== 'function') return null;
  const describe = ${describeSource};
  return (await context.getTools()).map(describe).filter((text) => text !== null).slice(0, ${maxToolsPerPage});
}`;

/**
 * In the page: runs one tool if its definition is still the judged one, racing the call against the tool being
 * withdrawn or replaced (toolchange, and a poll for pages whose context sends no event). The platform takes an
 * object, a polyfill JSON text: told apart by whether executeTool is the browser's own (never by trying both,
 * which could run a tool twice).
 */
const callSource = `async ({ name, args, judged, pollMs }) => {
  const context = document.modelContext;
  if (!context || typeof context.getTools !== 'function' || typeof context.executeTool !== 'function')
    return { code: 'no_tool', message: 'The page offers no WebMCP tools now.' };
  const describe = ${describeSource};
  const find = async () => (await context.getTools()).find((t) => t && t.name === name);
  const tool = await find();
  if (!tool) return { code: 'no_tool', message: 'The page has no tool "' + name + '" now.' };
  if (describe(tool) !== judged) return { code: 'moved', message: 'The page changed "' + name + '" after it was checked; nothing was done.' };
  const native = /\\[native code\\]/.test(Function.prototype.toString.call(context.executeTool));
  let stop = () => {};
  const withdrawn = new Promise((resolve) => {
    const check = () => find().then((now) => { if (!now || describe(now) !== judged) resolve(true); }, () => {});
    context.addEventListener?.('toolchange', check);
    const timer = setInterval(check, pollMs);
    stop = () => { clearInterval(timer); context.removeEventListener?.('toolchange', check); };
  });
  try {
    const run = Promise.resolve(context.executeTool(tool, native ? args : JSON.stringify(args)));
    const outcome = await Promise.race([run.then((value) => ({ value })), withdrawn.then(() => ({ gone: true }))]);
    if (outcome.gone) return { code: 'unregistered' };
    const value = outcome.value;
    const text = typeof value === 'string' ? value : (JSON.stringify(value ?? null) ?? 'null');
    if (text.length > ${maxResultBytes}) return { code: 'too_large', message: text.length + ' characters' };
    return { text };
  } catch (error) {
    const still = await find().catch(() => undefined);
    if (!still || describe(still) !== judged) return { code: 'unregistered' };
    return { code: 'tool_failed', message: String((error && error.message) || error).slice(0, 500) };
  } finally {
    stop();
  }
}`;

export type SiteCallAnswer =
  | { readonly text: string }
  | {
      readonly code: 'no_tool' | 'moved' | 'unregistered' | 'too_large' | 'tool_failed';
      readonly message?: string;
    };

/** The tools the tab's document registers now; undefined when it has no WebMCP context at all. */
export async function readSiteTools(tab: TrackedPage, timeoutMs: number): Promise<SiteTool[] | undefined> {
  tab.assertUsable();
  try {
    const texts = (await withDeadline(
      tab.page.evaluate(`(${listSource})()`),
      timeoutMs,
      "Reading the page's WebMCP tools",
      tab.interrupted,
    )) as string[] | null;
    // A page's tool named otherwise than a tool may be (line breaks, quoting markers) is not offered.
    return texts
      ?.map((text) => JSON.parse(text) as SiteTool)
      .filter((tool) => typeof tool.name === 'string' && siteToolNamePattern.test(tool.name));
  } catch (error) {
    throw translateBrowserError(error, "Reading the page's WebMCP tools");
  }
}

/** A tool's definition as the page reports it, in the form a call is bound to. */
export function definitionText(tool: SiteTool): string {
  return JSON.stringify({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    readOnly: tool.readOnly,
  });
}

/**
 * Runs the tool in the tab's page under the deadline. The page's own answer comes back as is (the caller caps,
 * wraps and words it); a deadline or a closed tab throws, and the caller says the outcome is unknown.
 */
export async function runSiteTool(
  tab: TrackedPage,
  call: { readonly tool: SiteTool; readonly args: Record<string, unknown> },
  timeoutMs: number,
): Promise<SiteCallAnswer> {
  tab.assertUsable();
  const input = {
    name: call.tool.name,
    args: call.args,
    judged: definitionText(call.tool),
    pollMs: 250,
  };
  const what = `Running the page's tool ${call.tool.name}`;
  try {
    return (await withDeadline(
      tab.page.evaluate(`(${callSource})(${JSON.stringify(input)})`),
      timeoutMs,
      what,
      tab.interrupted,
    )) as SiteCallAnswer;
  } catch (error) {
    throw translateBrowserError(error, what);
  }
}
