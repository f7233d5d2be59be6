// `tabward demo`: the guided demo on the bundled demo site; no model and no network needed.

import { Command } from 'commander';
import { runDemo } from '../demo/runDemo.ts';

export function demoCommand(): Command {
  return new Command('demo')
    .description(
      'Show the whole story on a bundled demo site: isolated reads, a login wall, your Chrome, approvals, the audit log.',
    )
    .option('--executable-path <path>', 'the Chrome/Chromium to use')
    .action(async (flags: { executablePath?: string }) => {
      await runDemo((line) => process.stdout.write(`${line}\n`), flags.executablePath);
    });
}
