// One exit code for bad input, everywhere (issue 32, defects 4 and 5): every subcommand given an unknown flag,
// a bad value, a bad choice or a missing argument says so in one line and exits 2; help and --version exit 0; a
// reader that closes the output pipe early (`tabward rules list | head`) ends the command quietly with 0.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/main.ts';
import { binPath } from '../helpers/mcpClient.ts';
import { runCli } from '../helpers/runCli.ts';

const home = mkdtempSync(join(tmpdir(), 'tabward-exit-'));
const env = { TABWARD_HOME: home };
after(() => rmSync(home, { recursive: true, force: true }));

/** Every command path of the program: ["mcp"], ["relay", "browsers", "revoke"], ... */
function paths(command: Command, prefix: string[] = []): string[][] {
  return command.commands.flatMap((sub) => [[...prefix, sub.name()], ...paths(sub, [...prefix, sub.name()])]);
}

test('an unknown flag exits 2 in every subcommand, naming the flag', async () => {
  const all = paths(buildProgram());
  assert.ok(all.length >= 20, `found ${all.length} commands`);
  for (let i = 0; i < all.length; i += 4)
    await Promise.all(
      all.slice(i, i + 4).map(async (path) => {
        const ran = await runCli([...path, '--no-such-flag'], env);
        assert.equal(ran.code, 2, `${path.join(' ')}: exit ${ran.code}: ${ran.stderr}`);
        // A command with a required option names that first; either way one line says what was wrong.
        assert.match(
          ran.stderr,
          /unknown option '--no-such-flag'|required option .* not specified/,
          path.join(' '),
        );
      }),
    );
});

test('a bad value, a bad choice and a missing argument exit 2; help and --version exit 0', async () => {
  const cases: [string[], number, RegExp][] = [
    [['mcp', '--mode', 'bogus'], 2, /argument 'bogus' is invalid/],
    [['mcp', '--http', 'x'], 2, /--http must be a port/],
    [['mcp', '--approval-wait', '0'], 2, /--approval-wait must be a whole number from 1/],
    [['run'], 2, /missing required argument 'recipe'/],
    [['approvals', 'approve'], 2, /missing required argument 'id'/],
    [['approvals', 'approve', 'seven'], 2, /"seven" is not a question id/],
    [['audit', '--tail', '-1'], 2, /--tail/],
    [['nonsense'], 2, /unknown command 'nonsense'/],
    [['--help'], 0, /^$/],
    [['approvals', '--help'], 0, /^$/],
    [['--version'], 0, /^$/],
  ];
  await Promise.all(
    cases.map(async ([args, code, says]) => {
      const ran = await runCli(args, env);
      assert.equal(ran.code, code, `${args.join(' ')}: exit ${ran.code}: ${ran.stderr}`);
      assert.match(ran.stderr, says, args.join(' '));
    }),
  );
});

test('a closed output pipe ends the command quietly, exit 0', async () => {
  for (const args of [['rules', 'list'], ['audit']]) {
    const child = spawn(process.execPath, [binPath, ...args], { env: { ...process.env, ...env } });
    // The reader goes away before a byte is read, as `| head -0` would.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.equal(code, 0, `${args.join(' ')}: exit ${code}: ${stderr}`);
    assert.doesNotMatch(stderr, /EPIPE|unexpected error/);
  }
});
