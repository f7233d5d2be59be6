// A real Redis for tests: Debian's redis-server on a free port of 127.0.0.1, its data in a folder of its own
// (append-only file on, so that a restart keeps the queue), stopped and removed after. Tests that need it are
// skipped with a line saying how to get it where redis-server is not installed (node scripts/setup.mjs installs it).

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './freePort.ts';
import { waitFor } from './waitFor.ts';

export interface RedisUnderTest {
  readonly url: string;
  readonly port: number;
  /** Stops it (SIGKILL: as a crash) and starts it again on the same port and data. */
  restart(): Promise<void>;
  /** Stops it; its data is removed unless kept (to start it again with restart()). */
  stop(options?: { keepData?: boolean }): Promise<void>;
}

/** Why Redis tests cannot run here, or undefined when redis-server is installed. */
export function redisMissing(): string | undefined {
  const found = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  return found.status === 0
    ? undefined
    : 'redis-server is not installed: run node scripts/setup.mjs (or apt-get install redis-server)';
}

export async function startRedis(): Promise<RedisUnderTest> {
  const dir = mkdtempSync(join(tmpdir(), 'tabward-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const launch = async () => {
    const started = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--save',
        '',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = started;
    let output = '';
    started.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    await waitFor('redis-server to take connections', () =>
      started.exitCode === null
        ? /Ready to accept connections/.test(output)
        : Promise.reject(new Error(`redis-server exited: ${output}`)),
    );
  };
  const kill = async () => {
    const running = child;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGKILL');
    await exited;
  };
  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    restart: async () => {
      await kill();
      await launch();
    },
    stop: async (options = {}) => {
      await kill();
      if (!options.keepData) rmSync(dir, { recursive: true, force: true });
    },
  };
}
