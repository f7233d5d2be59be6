// The last resort for a browser tabward launches: a tiny shell process that ends the browser's process group and
// removes its temporary profile once tabward is gone, however it went. tabward's own exit handler (launch.ts) does
// this on every exit it sees, but a SIGKILL runs no handler: an MCP client that closes tabward's stdin kills it 4 s
// later (the SDK's StdioClientTransport), and loading playwright-core alone can block tabward's event loop longer
// than that on a loaded machine while a browser starts. The reaper reads a pipe only tabward holds: tabward says on
// it which group to end and, once it cleaned up itself, that it is done; the pipe ending first means tabward died.
// No polling: the kernel closes the pipe when tabward's process ends. The folder travels in its environment, not
// its command line, so it is never taken for a process of the profile.

import { spawn } from 'node:child_process';
import { swallowed } from '../core/debug.ts';

export interface Reaper {
  /** The browser's process group, once spawned: killed too if tabward dies before saying `done`. */
  adopt(group: number): void;
  /** tabward closed the browser and removed the folder itself: the reaper leaves. */
  done(): void;
}

// A line "group N" names the browser's process group; "done" ends the reaper with nothing to do; the end of the
// pipe means tabward is gone. The group is killed and waited for (bounded: the leader, reparented, is reaped by
// init): a helper still running writes the profile back, creating its folders again. The folder comes from the
// environment; it is removed until it has stayed gone for 2 s (30 s at most), in case a browser the reaper was not
// told of (tabward killed before it could say) writes into it as it quits on its own: under load a browser killed
// mid-start wrote its profile back after a first 0.2 s of absence (a full run, survivesClient).
const script = `g=
while read -r line; do
  case "$line" in
    done) exit 0 ;;
    group\\ *) g=\${line#group } ;;
  esac
done
if [ -n "$g" ]; then
  kill -KILL -"$g" 2>/dev/null
  n=0
  while kill -0 -"$g" 2>/dev/null && [ $n -lt 100 ]; do sleep 0.05; n=$((n+1)); done
fi
[ -n "$TABWARD_REAP_DIR" ] || exit 0
n=0
gone=0
while [ $n -lt 150 ]; do
  rm -rf "$TABWARD_REAP_DIR" 2>/dev/null
  sleep 0.2
  if [ -e "$TABWARD_REAP_DIR" ]; then gone=0; else gone=$((gone+1)); fi
  [ $gone -lt 10 ] || exit 0
  n=$((n+1))
done`;

const nothing: Reaper = { adopt: () => undefined, done: () => undefined };

/**
 * Starts a reaper for a temporary folder (undefined: a folder the user gave, which is never removed), before the
 * browser that will use it is spawned: tabward killed in between still leaves nothing. Nowhere to run one (no
 * /bin/sh, as on Windows): tabward's exit handler alone is left.
 */
export function startReaper(dir: string | undefined): Reaper {
  if (process.platform === 'win32') return nothing;
  let reaper: ReturnType<typeof spawn>;
  try {
    reaper = spawn('/bin/sh', ['-c', script], {
      stdio: ['pipe', 'ignore', 'ignore'],
      // A group of its own: a Ctrl-C or a hang-up sent to tabward's group must not end it before it is needed.
      detached: true,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TABWARD_REAP_DIR: dir ?? '' },
    });
  } catch (error) {
    swallowed('browser', 'profileReaper: could not start one (the exit handler is left)', error);
    return nothing;
  }
  const { stdin } = reaper;
  if (!stdin) return nothing;
  reaper.on('error', (error) => swallowed('browser', 'profileReaper: the reaper failed', error));
  stdin.on('error', (error) => swallowed('browser', 'profileReaper: its pipe broke', error));
  // Neither the reaper nor its pipe keeps tabward running.
  reaper.unref();
  (stdin as unknown as { unref?: () => void }).unref?.();
  let ended = false;
  return {
    adopt: (group) => {
      if (!ended && group > 0) stdin.write(`group ${group}\n`);
    },
    done: () => {
      if (ended) return;
      ended = true;
      stdin.end('done\n');
    },
  };
}
