// Dialogs whose frame is gone. Chromium (measured on 156) keeps a dialog whose frame was removed: a cross-site
// iframe calls alert() and its parent removes it. Answering that dialog, closing the tab, or any navigation of it
// (the page's own included) then crashes the whole browser, with every other tab, context and run in it.
// Playwright does not say which frame a dialog came from; CDP does. A tab with such a dialog is retired: its
// scripts are stopped and the page frozen (it cannot navigate itself, and stays so once tabward's session ends), and
// nothing closes it, nor the context that holds it: it goes when the browser closes. Used for the agent's tabs
// (pages.ts) and for recipe runs' tabs (recipePage.ts).

import type { CDPSession, Page } from 'playwright-core';
import { swallow } from '../core/debug.ts';
import { withDeadline } from './deadline.ts';

/** Pages retired, which nothing may close: a context holding one is not closed either (sharedIsolatedBrowser.ts). */
export const retiredPages = new WeakSet<Page>();

/** Pages with a dialog open: nothing closes them either while it is (a frame may be removed under it any moment). */
export const pagesWithDialogs = new WeakSet<Page>();

export interface DialogWatch {
  /** Whether the open dialog may be answered; undefined while this session has not been told of one. */
  answerable(): boolean | undefined;
  /**
   * Playwright reported a dialog open: once this session has caught up, a dialog it was not told of (opened before
   * it listened) has no known frame, so the tab is orphaned (fail closed: its frame may be removed unseen).
   */
  reported(): Promise<void>;
}

/** A dialog the browser closed, as this session was told of it when it opened. */
export interface ClosedDialog {
  readonly message: string;
  readonly type: string;
}

interface FrameTree {
  readonly frame: { readonly id: string };
  readonly childFrames?: readonly FrameTree[];
}

const idsIn = (tree: FrameTree): string[] => [tree.frame.id, ...(tree.childFrames ?? []).flatMap(idsIn)];

/**
 * Calls `orphaned` once the dialog open in the tab can no longer be answered safely: its frame was removed, or it
 * was opened by a frame outside the tab's own frame tree (a frame inside an out-of-process frame, which that other
 * process can remove at any moment: measured, no event of the tab's session tells it). The tree is kept from the
 * session's own events (the renderer cannot be asked while a dialog holds it), seeded by one read as watching
 * starts. Resolves once watching; `answerable` says whether the dialog open now may be answered.
 */
export async function watchOrphanDialogs(
  page: Page,
  cdp: CDPSession,
  orphaned: () => void,
  closed: (dialog: ClosedDialog) => void = () => undefined,
): Promise<DialogWatch> {
  const ownTree = new Set<string>();
  let dialog: (ClosedDialog & { frameId: string | undefined }) | undefined;
  const orphan = () => {
    dialog = undefined;
    orphaned();
  };
  const answerable = () => {
    if (retiredPages.has(page)) return false;
    if (!dialog) return undefined;
    // A dialog that names no frame is taken as the tab's own (as before frames were told).
    if (dialog.frameId === undefined || ownTree.has(dialog.frameId)) return true;
    orphan();
    return false;
  };
  cdp.on('Page.frameAttached', (event: { frameId: string }) => void ownTree.add(event.frameId));
  cdp.on('Page.frameNavigated', (event: { frame: { id: string } }) => void ownTree.add(event.frame.id));
  cdp.on('Page.javascriptDialogOpening', (event: { frameId?: string; message: string; type: string }) => {
    dialog = { frameId: event.frameId, message: event.message, type: event.type };
    pagesWithDialogs.add(page);
    answerable();
  });
  // Closed by anyone: tabward's answer, the user's click in their own Chrome, or the browser itself (measured on
  // 156: a dialog of a cross-site frame is dismissed when another frame of the tab commits in a new process).
  cdp.on('Page.javascriptDialogClosed', () => {
    const was = dialog;
    dialog = undefined;
    pagesWithDialogs.delete(page);
    if (was) closed({ message: was.message, type: was.type });
  });
  cdp.on('Page.frameDetached', (event: { frameId: string; reason?: string }) => {
    if (event.reason !== 'remove') return;
    ownTree.delete(event.frameId);
    if (dialog && event.frameId === dialog.frameId) orphan();
  });
  // Bounded: the caller waits for this before answering a dialog, and fails closed when it fails.
  await withDeadline(cdp.send('Page.enable'), 5_000, "Watching the tab's dialogs");
  const { frameTree } = (await withDeadline(
    cdp.send('Page.getFrameTree'),
    2_000,
    "Reading the tab's frames",
  ).catch(() => ({ frameTree: undefined }))) as { frameTree: FrameTree | undefined };
  if (frameTree) for (const id of idsIn(frameTree)) ownTree.add(id);
  const reported = async () => {
    // A round trip the browser answers (a renderer held by the dialog cannot): an opening told to this session
    // before it is delivered before its answer.
    const caughtUp = await withDeadline(cdp.send('Target.getTargetInfo'), 2_000, 'Reading the tab').then(
      () => true,
      () => false,
    );
    if (caughtUp && !dialog && !retiredPages.has(page)) orphan();
  };
  return { answerable, reported };
}

/** Stops the tab for good (see above) and marks it retired. */
export async function retireTab(page: Page, cdp: CDPSession): Promise<void> {
  retiredPages.add(page);
  await cdp
    .send('Emulation.setScriptExecutionDisabled', { value: true })
    .catch(swallow('browser', 'orphanDialogs.retireTab: Emulation.setScriptExecutionDisabled'));
  // Disabled scripts come back when this session ends (a client leaving, tabward exiting), and the tab stays
  // (closing it would crash the browser). A frozen page stays frozen without any session: its frames, in every
  // process, and its dedicated workers run no task until it is shown again (measured on 156).
  await cdp
    .send('Page.setWebLifecycleState', { state: 'frozen' })
    .catch(swallow('browser', 'orphanDialogs.retireTab: Page.setWebLifecycleState frozen'));
}
