// What the bridge and the observer say about a page's tools: whatever a page calls a tool becomes the plain
// SiteTool sent on (a JSON round trip of the fields that matter, so functions, windows and cycles never leave the
// page; anything odd is dropped), results become text, and a withdrawn tool's calls get one message.

import { type SiteTool, siteToolNamePattern } from '../../src/protocol/siteTools.ts';

interface ToolLike {
  readonly name?: unknown;
  readonly description?: unknown;
  readonly inputSchema?: unknown;
  readonly annotations?: { readonly readOnlyHint?: unknown } | null;
}

export function toSiteTool(
  tool: ToolLike,
  json: { stringify: typeof JSON.stringify; parse: typeof JSON.parse },
): SiteTool | undefined {
  try {
    if (typeof tool.name !== 'string' || !siteToolNamePattern.test(tool.name)) return undefined;
    const rawSchema = typeof tool.inputSchema === 'string' ? json.parse(tool.inputSchema) : tool.inputSchema;
    const copy = json.parse(
      json.stringify({
        name: tool.name,
        description: typeof tool.description === 'string' ? tool.description : '',
        inputSchema: rawSchema ?? { type: 'object', properties: {} },
        readOnly: tool.annotations?.readOnlyHint === true,
      }),
    ) as SiteTool;
    if (typeof copy.inputSchema !== 'object' || copy.inputSchema === null) return undefined;
    return copy;
  } catch {
    return undefined;
  }
}

/** What a page tool returned, as the string sent to the agent. */
export function resultText(value: unknown, stringify: typeof JSON.stringify): string {
  if (typeof value === 'string') return value;
  return stringify(value ?? null) ?? 'null';
}

/** The error of a call whose tool the page withdrew while it ran. */
export function withdrawnMessage(name: string, readOnly: boolean): string {
  return `The page withdrew "${name}" during the call.${readOnly ? '' : ' The outcome is unknown: the page may or may not have done it.'}`;
}
