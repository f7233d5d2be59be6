// A long-running `tabward` command (serve, worker) as a user starts it: its stderr kept, resolved once it says it is
// ready, rejected with what it said if it exits first. `detached` puts it in a process group of its own, so that a
// test can kill it together with the browser it started (a machine that died).

import { type ChildProcess, spawn } from 'node:child_process';
import { binPath } from './mcpClient.ts';
import { tokenFile } from './tokenFile.ts';
import { waitFor } from './waitFor.ts';

export interface RunningTabward {
  readonly child: ChildProcess;
  readonly output: () => string;
}

export function startTabward(
  args: readonly string[],
  ready: RegExp,
  options: { readonly home: string; readonly detached?: boolean; readonly env?: NodeJS.ProcessEnv },
): Promise<RunningTabward> {
  const child = spawn(process.execPath, [binPath, ...args], {
    env: { ...process.env, TABWARD_HOME: options.home, ...options.env },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: options.detached === true,
  });
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const running = { child, output: () => output };
  // One that exits before it is ready fails at once, saying what it said; one that never gets ready is killed.
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code, signal) =>
      reject(new Error(`tabward ${args[0]} exited (${signal ?? code}) before it was ready:\n${output}`)),
    ),
  );
  exited.catch(() => undefined);
  const started = waitFor(`tabward ${args[0]} to start`, () => ready.test(output) && running);
  return Promise.race([started, exited]).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error instanceof Error ? new Error(`${error.message}\n${output}`) : error;
  });
}

export interface RunningServe extends RunningTabward {
  /** Where it serves recipes: http://127.0.0.1:PORT. */
  readonly base: string;
}

/** `tabward serve` on a free port, its bearer token in a file of its own (mode 600), once it says where it serves. */
export async function startServe(
  token: string,
  args: readonly string[],
  options: { readonly home: string; readonly detached?: boolean; readonly env?: NodeJS.ProcessEnv },
): Promise<RunningServe> {
  const serving = /serving recipes at (\S+)/;
  const running = await startTabward(
    ['serve', '--port', '0', '--token-file', tokenFile(token), ...args],
    serving,
    options,
  );
  return { ...running, base: serving.exec(running.output())?.[1] ?? '' };
}
