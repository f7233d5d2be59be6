// External MCP servers for the agent: `~/.tabward/mcp.json`, overridden server by server by a project's
// `.tabward/mcp.json`. Format: {"mcpServers": {NAME: {command, args?, env?} | {url, headers?}, disabled?}},
// with ${VAR} replaced from the environment.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TabwardError } from '../core/errors.ts';

export type ServerSpec =
  | {
      readonly name: string;
      readonly command: string;
      readonly args: string[];
      readonly env: Record<string, string>;
    }
  | { readonly name: string; readonly url: string; readonly headers: Record<string, string> };

export function loadMcpConfig(
  files: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): ServerSpec[] {
  const merged = new Map<string, Record<string, unknown>>();
  for (const file of files) {
    if (!existsSync(file)) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch (error) {
      throw new TabwardError(
        'bad_input',
        `${file} is not valid JSON: ${error instanceof Error ? error.message : String(error)}.`,
      );
    }
    const servers = (parsed as { mcpServers?: unknown }).mcpServers;
    if (typeof servers !== 'object' || servers === null)
      throw new TabwardError('bad_input', `${file}: expected {"mcpServers": {...}}.`);
    for (const [name, spec] of Object.entries(servers)) merged.set(name, spec as Record<string, unknown>);
  }
  return [...merged].flatMap(([name, spec]) => (spec.disabled === true ? [] : [toSpec(name, spec, env)]));
}

export function defaultMcpConfigFiles(home: string, cwd: string): string[] {
  return [join(home, 'mcp.json'), join(cwd, '.tabward', 'mcp.json')];
}

function toSpec(
  name: string,
  spec: Record<string, unknown>,
  env: Readonly<Record<string, string | undefined>>,
): ServerSpec {
  const expand = (value: unknown): string =>
    String(value).replace(/\$\{(\w+)\}/g, (_, key: string) => env[key] ?? '');
  const record = (value: unknown) =>
    Object.fromEntries(
      Object.entries((value as Record<string, unknown>) ?? {}).map(([key, inner]) => [key, expand(inner)]),
    );
  if (typeof spec.command === 'string') {
    const args = Array.isArray(spec.args) ? spec.args.map(expand) : [];
    return { name, command: expand(spec.command), args, env: record(spec.env) };
  }
  if (typeof spec.url === 'string') return { name, url: expand(spec.url), headers: record(spec.headers) };
  throw new TabwardError('bad_input', `mcpServers.${name}: give a "command" (with "args") or a "url".`);
}
