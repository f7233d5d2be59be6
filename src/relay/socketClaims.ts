// One socket speaks for one paired browser (docs/architecture.md "Paired browsers"): a second socket with a
// connected browser's credential is refused while the connected one answers a ping (its popup is told); one that
// does not answer gives way to the new one. Both are said in the relay's log and audit.

import type { WebSocket } from 'ws';
import { answersPing, claimProbeMs } from './hubAnswers.ts';
import type { ExtensionRecord } from './relayStore.ts';

export interface SocketClaimsDeps<C> {
  /** The browser's connected socket, if it has one. */
  readonly live: (extensionId: string) => C | undefined;
  readonly socketOf: (connection: C) => WebSocket;
  /** Said on stderr and in the audit log (the relay's pairing events). */
  readonly told: (extension: ExtensionRecord, what: string) => void;
  /** Shown in that browser's popup. */
  readonly alert: (connection: C, message: string) => void;
  /** Closes a socket that gave way and forgets it. */
  readonly drop: (connection: C) => void;
}

export class SocketClaims<C> {
  /** Browsers whose second socket is being weighed: a third one meanwhile is refused. */
  private readonly admitting = new Set<string>();

  constructor(private readonly deps: SocketClaimsDeps<C>) {}

  /**
   * May a new socket speak for this browser? Not while its current socket answers a ping: then someone else
   * holds the credential (or the browser opened a second link), and the connected browser's popup is told. A
   * current socket that does not answer (the laptop slept) is dropped and the new one admitted.
   */
  async admit(extension: ExtensionRecord): Promise<boolean> {
    const live = this.deps.live(extension.id);
    if (!live && !this.admitting.has(extension.id)) return true;
    if (!live || this.admitting.has(extension.id)) return this.refuseClaim(extension, live);
    this.admitting.add(extension.id);
    try {
      if (!(await answersPing(this.deps.socketOf(live)))) {
        // Said as it happened: whoever holds the credential now speaks for this browser.
        this.deps.told(
          extension,
          `its socket did not answer a ping within ${claimProbeMs / 1000} s and gave way to a new connection with its credential`,
        );
        this.deps.drop(live);
        return true;
      }
      return this.refuseClaim(extension, live);
    } finally {
      this.admitting.delete(extension.id);
    }
  }

  private refuseClaim(extension: ExtensionRecord, live: C | undefined): false {
    const what = `a second connection claimed to be browser ${extension.id} while it is connected; it was refused`;
    this.deps.told(extension, what);
    if (live)
      this.deps.alert(
        live,
        'Another connection to the relay used this browser’s pairing and was refused. If you did not open tabward in a second place, someone else has this browser’s credential: Unpair, then pair again.',
      );
    return false;
  }
}
