// tabward's own reads of a tab's main document (password values to mask, the login-wall facts), evaluated in an
// isolated world of its own over tabward's read session of the tab (readSessions.ts). The page's world is the page's: a page that
// redefines what its scripts see (an input's value getter, querySelectorAll) would lie to a read made there. The
// world is the one the snapshot reads in (documentReads.ts, same name): made once a document, by whichever reads
// first. No slower than Playwright's evaluate in the page's world (bench/results.md).

import { swallow } from '../../core/debug.ts';
import { worldOf } from './documentReads.ts';
import { mainScope } from './frameScopes.ts';
import type { ReadSession } from './readSessions.ts';

interface EvaluateReply<T> {
  readonly result: { readonly value?: T };
  readonly exceptionDetails?: {
    readonly text?: string;
    readonly exception?: { readonly description?: string };
  };
}

/** tabward's own CDP session of the tab could not be opened: nothing can be read out of the page's reach. */
export class NoOwnSession extends Error {
  constructor() {
    super("tabward's CDP session of the tab is not available");
  }
}

export class IsolatedReads {
  /** The world made in the current document, by the document's sequence number in its tab. */
  private world: { readonly documentSeq: number; readonly contextId: Promise<number> } | undefined;

  /** `session`: the tab's read session, undefined when none could be opened. */
  constructor(private readonly session: () => Promise<ReadSession | undefined>) {}

  /**
   * The expression's value (by value: JSON-like; a promise's once settled), read in document `documentSeq` of the tab. Undefined session:
   * throws, and the caller reads nothing rather than read in the page's world.
   */
  async evaluate<T>(expression: string, documentSeq: number): Promise<T> {
    const session = await this.session();
    if (!session) throw new NoOwnSession();
    for (let attempt = 0; ; attempt++) {
      const contextId = await this.contextIn(session, documentSeq);
      try {
        const reply = (await session.send('Runtime.evaluate', {
          expression,
          contextId,
          returnByValue: true,
          // A promise is waited for (settling's wait for a document); any other value is as it is.
          awaitPromise: true,
        })) as EvaluateReply<T>;
        if (reply.exceptionDetails)
          throw new Error(
            reply.exceptionDetails.exception?.description ?? reply.exceptionDetails.text ?? 'evaluate failed',
          );
        return reply.result.value as T;
      } catch (error) {
        // The document changed under a world made for it (its context is gone): make one in the new document.
        this.world = undefined;
        if (attempt > 0 || !/context/i.test(String(error))) throw error;
      }
    }
  }

  /**
   * Makes the world of document `documentSeq` now, without waiting: called as a navigation commits, the round trip
   * overlaps the document's loading instead of following it (the renderer is busiest just after it is parsed).
   */
  prepare(documentSeq: number): void {
    void this.session()
      .then((session) => session && this.contextIn(session, documentSeq))
      .catch(
        swallow('browser', 'isolatedReads.prepare: the world of a new document (made again on the read)'),
      );
  }

  private contextIn(session: ReadSession, documentSeq: number): Promise<number> {
    if (this.world?.documentSeq === documentSeq) return this.world.contextId;
    const contextId = mainScope(session).then(({ frameId }) => worldOf(session, frameId));
    const world = { documentSeq, contextId };
    this.world = world;
    // A world that could not be made is asked for again on the next read.
    contextId.catch(() => {
      if (this.world === world) this.world = undefined;
    });
    return contextId;
  }
}
