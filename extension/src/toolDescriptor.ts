// Turns whatever a page calls a tool into the plain SiteTool the bridge sends on: a JSON round trip of the
// fields that matter, so functions, windows and cycles never leave the page. Anything odd is dropped.

import type { SiteTool } from '../../src/protocol/siteTools.ts';

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
    if (typeof tool.name !== 'string' || !tool.name) return undefined;
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
