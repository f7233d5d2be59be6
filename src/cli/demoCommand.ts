// `tabward demo`: the guided demo on the bundled demo site; no model and no network needed.

import { Command } from 'commander';
import { visibleLines } from '../core/displayText.ts';
import { listenError } from './listenError.ts';
import { portNumber } from './options.ts';

export function demoCommand(): Command {
  return new Command('demo')
    .description(
      'Show the whole story on a bundled demo site: isolated reads, a login wall, your Chrome, approvals, the audit log.',
    )
    .option('--executable-path <path>', 'the Chrome/Chromium to use')
    .option('--site-only', 'only serve the demo site (for the example recipes) until Ctrl-C')
    .option('--port <port>', 'with --site-only: the port', portNumber, 8765)
    .action(async (flags: { executablePath?: string; siteOnly?: boolean; port: number }) => {
      const { runDemo } = await import('../demo/runDemo.ts');
      const { startDemoSite } = await import('../demo/demoSite.ts');
      if (!flags.siteOnly) {
        await runDemo((line) => process.stdout.write(`${visibleLines(line)}\n`), flags.executablePath);
        return;
      }
      const site = await startDemoSite(flags.port).catch((error: unknown) => {
        throw listenError(error, '--port', flags.port);
      });
      process.stdout.write(
        `Acme demo site at http://127.0.0.1:${site.port}/ (user alice, password demo-password). Ctrl-C stops it.\n`,
      );
      process.on('SIGINT', () => void site.close().then(() => process.exit(0)));
    });
}
