// Runs `bin/tabward agent ARGS` with its standard input given up front, and collects what it printed.

import { spawn } from 'node:child_process';
import { binPath } from './mcpClient.ts';

export interface AgentRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function runAgent(
  args: readonly string[],
  stdin: string,
  env: Record<string, string>,
  cwd?: string,
): Promise<AgentRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [binPath, 'agent', ...args], {
      env: { ...process.env, ...env },
      ...(cwd ? { cwd } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.stdin.end(stdin);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}
