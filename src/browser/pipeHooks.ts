// The hooks of a tab of a browser tabward started, behind its egress proxy (docs/architecture.md "Narrow hooks"):
// a session of tabward's own on the browser's pipe (browser/pipeSession.ts) pauses the tab's requests, answered as
// each pause is read rather than after everything queued for Playwright, and each out-of-process frame (and frame
// inside one) is attached under it by auto-attach and held at its start until a hook of its own is in place, so
// that none of its requests goes before it is watched. What is paused (narrow or wide): browser/hookPatterns.ts;
// the verdict: NetworkGuard.onPaused.

import type { Page } from 'playwright-core';
import { swallow } from '../core/debug.ts';
import type { HookSession, HookWidth } from './hookPatterns.ts';
import type { PausedRequest } from './hookRequests.ts';
import type { PipeSession, PipeSessions } from './pipeSession.ts';

/** Judges one paused request on the session it paused on; `mainFrameId` only for the tab's own session. */
export type JudgePaused = (
  session: HookSession,
  event: PausedRequest,
  mainFrameId: string | undefined,
) => Promise<void>;

/** What the browser tells of a target it attached under a session with auto-attach. */
interface AttachedTarget {
  readonly sessionId: string;
  readonly targetInfo: { readonly type: string };
  readonly waitingForDebugger: boolean;
}

const swallowing = (why: string) => swallow('browser', `pipeHooks.${why}`);

const autoAttach = { autoAttach: true, waitForDebuggerOnStart: true, flatten: true };

/** Hooks the tab and, as they start, its out-of-process frames; resolves with its main frame's id (its target's). */
export async function hookTabOnThePipe(
  pipe: PipeSessions,
  page: Page,
  width: HookWidth,
  judge: JudgePaused,
): Promise<string> {
  const probe = await page.context().newCDPSession(page);
  const { targetInfo } = (await probe.send('Target.getTargetInfo')) as { targetInfo: { targetId: string } };
  void probe.detach().catch(swallowing('hookTabOnThePipe: probe.detach()'));
  const raw = await pipe.open(targetInfo.targetId);
  page.once('close', () => void raw.detach());
  const mainFrameId = targetInfo.targetId;
  /** Its out-of-process frames' sessions, attached under the tab's as each frame starts. */
  const frames = new Map<string, HookSession>();
  raw.on('Fetch.requestPaused', (event, sessionId) => {
    const frame = sessionId === undefined ? undefined : frames.get(sessionId);
    void judge(frame ?? raw, event as unknown as PausedRequest, frame ? undefined : mainFrameId).catch(
      swallowing('hookTabOnThePipe: a paused request (tab gone)'),
    );
  });
  raw.on('Target.attachedToTarget', (event) => {
    void hookFrame(raw, page, width, frames, event as unknown as AttachedTarget);
  });
  await width.enable(page, raw, true);
  await raw.send('Target.setAutoAttach', autoAttach);
  return mainFrameId;
}

/**
 * A target the tab's (or a frame's) auto-attach reported, held at its start: an out-of-process frame gets a hook of
 * its own (paused as the tab's are) and the same auto-attach; anything else (a worker) is let go unwatched, as
 * before. Either way it is let start, whatever failed.
 */
async function hookFrame(
  raw: PipeSession,
  page: Page,
  width: HookWidth,
  frames: Map<string, HookSession>,
  { sessionId, targetInfo, waitingForDebugger }: AttachedTarget,
): Promise<void> {
  raw.adopt(sessionId);
  const session: HookSession = {
    send: (method, params) => raw.sendTo(sessionId, method, params),
    on: () => undefined,
  };
  const frame = targetInfo.type === 'iframe';
  try {
    if (frame) {
      frames.set(sessionId, session);
      // Both are in place before the frame starts; neither waits for the other.
      await Promise.all([
        width.enable(page, session, true),
        session.send('Target.setAutoAttach', autoAttach),
      ]);
    }
  } catch (error) {
    swallowing('hookFrame: the frame went away')(error);
  } finally {
    if (waitingForDebugger)
      await session
        .send('Runtime.runIfWaitingForDebugger')
        .catch(swallowing('hookFrame: runIfWaitingForDebugger'));
    if (!frame)
      await raw.send('Target.detachFromTarget', { sessionId }).catch(swallowing('hookFrame: detach'));
  }
}
