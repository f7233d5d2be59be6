// A desktop notification when a question opens, where the desktop has a notifier (notify-send on Linux,
// osascript on macOS): what is asked and how to answer. Fire and forget: a missing notifier or one that hangs
// never holds a question up.

import { spawn } from 'node:child_process';

export type Notify = (title: string, body: string) => void;

/** The platform's notifier, or a no-op where there is none (or with --no-notify). */
export function desktopNotifier(enabled: boolean, log: (line: string) => void): Notify {
  if (!enabled) return () => undefined;
  let warned = false;
  const run = (command: string, args: string[]) => {
    const child = spawn(command, args, { stdio: 'ignore', detached: false });
    const timer = setTimeout(() => child.kill(), 5_000);
    timer.unref();
    child.on('exit', () => clearTimeout(timer));
    child.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      // Said once: a desktop without a notifier still has `tabward approvals`.
      if (warned) return;
      warned = true;
      log(
        `tabward: no desktop notification (${command}: ${error.code ?? error.message}); questions wait in \`tabward approvals\``,
      );
    });
  };
  return (title, body) => {
    if (process.platform === 'darwin')
      run('osascript', ['-e', `display notification ${appleString(body)} with title ${appleString(title)}`]);
    else run('notify-send', ['--app-name=tabward', '--urgency=critical', title, body]);
  };
}

/** An AppleScript string literal: quotes and backslashes escaped, so a page's text cannot end it. */
function appleString(text: string): string {
  return `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}
