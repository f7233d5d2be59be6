// The page's own WebMCP tools, from tabward's MCP server: list_site_tools shows what the agent's tab registers on
// document.modelContext, call_site_tool runs one through the guard like a click (core/siteCalls.ts builds the
// facts: the read-only hint believed only when name and description agree, sensitive pages always ask). The
// arguments are checked against the page's own JSON Schema before anyone is asked; the result is capped at
// 256 KiB of encoded bytes and wrapped as untrusted page content; a tool withdrawn mid-call fails the call.

import { Ajv, type ValidateFunction } from 'ajv';
import { z } from 'zod';
import type { TrackedPage } from '../browser/pages.ts';
import { definitionText, readSiteTools, runSiteTool, type SiteCallAnswer } from '../browser/webmcpPage.ts';
import { quotedForDisplay } from '../core/displayText.ts';
import { type ErrorCode, TabwardError } from '../core/errors.ts';
import { originOf } from '../core/guard.ts';
import { linearRegExp, refuseUncheckable } from '../core/pageSchemaLimits.ts';
import { untrusted } from '../core/redact.ts';
import { tabSiteCallFacts } from '../core/siteCalls.ts';
import { toolLine, visibleJson } from '../protocol/siteListing.ts';
import { trustedReadOnly } from '../protocol/siteRules.ts';
import { encodedBytes, maxResultBytes, type SiteTool } from '../protocol/siteTools.ts';
import { pageTarget, requireTab } from './common.ts';
import { defineTool, type ToolContext, text } from './tool.ts';

const pageId = z.string().optional().describe('Tab id; default: the selected tab');
// Patterns by RE2, in linear time: a page's schema cannot make a call slow (core/pageSchemaLimits.ts).
const ajv = new Ajv({ strict: false, allErrors: true, code: { regExp: linearRegExp } });
const validators = new Map<string, ValidateFunction>();

export const listSiteTools = defineTool({
  name: 'list_site_tools',
  description: "List the tab's own WebMCP tools (name, hint, input schema).",
  kind: 'read',
  schema: () => z.object({ pageId }),
  target: (args, context) => pageTarget(context, args.pageId),
  handle: async (_args, context, target) => {
    const tab = requireTab(target);
    const tools = await readSiteTools(tab, context.timeoutMs);
    const origin = originOf(tab.page.url());
    if (tools === undefined)
      return { content: [text(`${origin} offers no WebMCP tools (no document.modelContext).`)] };
    if (tools.length === 0) return { content: [text(`${origin} registers no WebMCP tools now.`)] };
    const lines = tools.map(
      (tool) =>
        `${toolLine(tool.name, hintOf(tool), tool.description).trimStart()}\n  ${visibleJson(tool.inputSchema)}`,
    );
    return { content: [text(untrusted(origin, lines.join('\n')))], readFrom: [tab] };
  },
});

export const callSiteTool = defineTool({
  name: 'call_site_tool',
  description: "Call one of the tab's WebMCP tools (see list_site_tools).",
  kind: 'write',
  schema: () =>
    z.object({
      name: z.string().min(1),
      arguments: z.looseObject({}).optional(),
      pageId,
    }),
  carriesData: () => true,
  target: async (args, context) => {
    const target = await pageTarget(context, args.pageId);
    const tool = await findTool(args.name, context, target.tab);
    validate(tool, args.arguments ?? {});
    return {
      ...target,
      element: { role: 'WebMCP tool', name: tool.name },
      // The approval is bound to the definition judged: a page that redefines the tool is asked about again.
      fingerprints: { [tool.name]: definitionText(tool) },
      siteCall: tabSiteCallFacts(tool, target.frames),
    };
  },
  handle: async (args, context, target) => {
    const tab = requireTab(target);
    const judged = target.fingerprints?.[args.name];
    if (judged === undefined) throw new TabwardError('internal', 'The call acted before its tool was read.');
    const tool = JSON.parse(judged) as SiteTool;
    const readOnly = trustedReadOnly(tool);
    const answer = await runSiteTool(tab, { tool, args: args.arguments ?? {} }, context.timeoutMs * 2).catch(
      (error: unknown) => {
        if (!(error instanceof TabwardError) || readOnly) throw error;
        throw new TabwardError(error.code, `${error.message} ${unknownOutcome}`, error.hint);
      },
    );
    const origin = originOf(tab.page.url());
    return { content: [text(untrusted(origin, resultOf(tool, answer, readOnly, origin)))], readFrom: [tab] };
  },
});

const unknownOutcome = 'The outcome is unknown: the page may or may not have done it.';

function hintOf(tool: SiteTool): string {
  if (trustedReadOnly(tool)) return ' (read-only)';
  return tool.readOnly ? ' (claims read-only; treated as a write)' : '';
}

async function findTool(name: string, context: ToolContext, tab: TrackedPage | undefined): Promise<SiteTool> {
  if (!tab) throw new TabwardError('internal', 'call_site_tool needs a tab.');
  const tools = (await readSiteTools(tab, context.timeoutMs)) ?? [];
  const tool = tools.find((each) => each.name === name);
  if (tool) return tool;
  throw new TabwardError(
    'not_found',
    `The page has no WebMCP tool named ${quotedForDisplay(name, 80)}.`,
    tools.length > 0
      ? `Its tools: ${tools.map((each) => quotedForDisplay(each.name, 80)).join(', ')}.`
      : 'It registers none now (list_site_tools).',
  );
}

/** The page's schema, compiled once per schema; a schema that does not compile refuses every call. */
function validate(tool: SiteTool, args: Record<string, unknown>): void {
  refuseUncheckable(tool, args);
  const key = JSON.stringify(tool.inputSchema);
  let check = validators.get(key);
  if (!check) {
    try {
      check = ajv.compile(tool.inputSchema);
    } catch (error) {
      throw new TabwardError(
        'bad_input',
        `The page's schema for ${quotedForDisplay(tool.name, 80)} is not a valid JSON Schema (${error instanceof Error ? error.message : String(error)}); calls are refused.`,
      );
    }
    // Pages choose their schemas: the cache is bounded.
    if (validators.size >= 200) validators.clear();
    validators.set(key, check);
  }
  if (check(args)) return;
  const problems = (check.errors ?? []).map((e) => `${e.instancePath || '(arguments)'} ${e.message ?? ''}`);
  throw new TabwardError(
    'bad_input',
    `The arguments do not match the schema of ${quotedForDisplay(tool.name, 80)}: ${problems.join('; ')}. Nothing was run.`,
    'See the schema with list_site_tools.',
  );
}

/** The page's answer as the agent's text, or the error it means; the cap is on bytes as JSON, as on the wire. */
function resultOf(tool: SiteTool, answer: SiteCallAnswer, readOnly: boolean, origin: string): string {
  if ('text' in answer) {
    const bytes = encodedBytes(answer.text);
    if (bytes > maxResultBytes) throw tooLarge(`${bytes} bytes as JSON`);
    const { shown, failed } = readable(answer.text);
    if (failed)
      throw new TabwardError(
        'internal',
        `The page's tool ${quotedForDisplay(tool.name, 80)} failed:\n${untrusted(origin, shown)}`,
      );
    return shown;
  }
  if (answer.code === 'too_large') throw tooLarge(answer.message ?? 'too large');
  if (answer.code === 'unregistered')
    throw new TabwardError(
      'not_found',
      `The page withdrew ${quotedForDisplay(tool.name, 80)} during the call.${readOnly ? '' : ` ${unknownOutcome}`}`,
    );
  if (answer.code === 'tool_failed')
    throw new TabwardError(
      'internal',
      `The page's tool ${quotedForDisplay(tool.name, 80)} failed:\n${untrusted(origin, answer.message ?? '')}`,
    );
  const code: ErrorCode = answer.code === 'moved' ? 'rejected' : 'not_found';
  throw new TabwardError(code, answer.message ?? `The call of ${quotedForDisplay(tool.name, 80)} failed.`);
}

/**
 * An MCP-shaped result ({content: [{type: 'text', text}], isError}) as its texts, which is what it says and
 * costs fewer tokens than its JSON; anything else as the page gave it.
 */
function readable(result: string): { shown: string; failed: boolean } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(result);
  } catch {
    return { shown: result, failed: false };
  }
  const { content, isError } = (parsed ?? {}) as { content?: unknown; isError?: unknown };
  if (!Array.isArray(content)) return { shown: result, failed: false };
  const texts = content.map((part: { type?: unknown; text?: unknown }) =>
    part?.type === 'text' && typeof part.text === 'string' ? part.text : undefined,
  );
  if (texts.some((each) => each === undefined)) return { shown: result, failed: false };
  return { shown: texts.join('\n'), failed: isError === true };
}

function tooLarge(size: string): TabwardError {
  return new TabwardError(
    'bad_input',
    `The result is ${size}, over the ${maxResultBytes}-byte cap.`,
    'Ask the tool for less (a narrower query, a page of results).',
  );
}
