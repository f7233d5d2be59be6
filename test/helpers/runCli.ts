// Runs `bin/tabward ARGS` as a user would, and reads its JSON output back for assertions.

import { execFile } from 'node:child_process';
import type { Loose } from './loose.ts';
import { binPath } from './mcpClient.ts';

export interface CliOutcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** stdout parsed as JSON, or null when it is not JSON. */
  readonly json: Loose;
  /** Killed at the deadline instead of exiting on its own. */
  readonly killed: boolean;
}

export function runCli(args: readonly string[], env: Record<string, string>): Promise<CliOutcome> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [binPath, ...args],
      { env: { ...process.env, ...env }, timeout: 120_000 },
      (error, stdout, stderr) => {
        let json: Loose = null;
        try {
          json = JSON.parse(stdout);
        } catch {
          // not JSON: left null for the assertion to show
        }
        const killed = Boolean((error as { killed?: boolean } | null)?.killed);
        resolve({
          code: error ? Number((error as { code?: number }).code ?? 1) : 0,
          stdout,
          stderr,
          json,
          killed,
        });
      },
    );
  });
}
