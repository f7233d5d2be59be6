// A workspace's activity feed (relay/extensionHub.ts): each line is stored and sent to the workspace's browsers
// together with the lines of the same moment, so that a call's own messages never wait behind them (each message
// wakes the browser's worker; each write costs time).

import type { ActivityEntry } from '../protocol/siteTools.ts';
import type { RelayStore } from './relayStore.ts';

/** How long activity lines wait to go out together (a human reads them; a call should not wait for them). */
const activityDelayMs = 50;

export class ActivityFeed {
  private readonly queued = new Map<string, ActivityEntry[]>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly store: RelayStore,
    /** Sends a workspace's lines to its connected browsers. */
    private readonly broadcast: (workspace: string, entries: ActivityEntry[]) => void,
  ) {}

  record(workspace: string, entry: ActivityEntry): void {
    const queued = this.queued.get(workspace) ?? [];
    queued.push(entry);
    this.queued.set(workspace, queued);
    this.timer ??= setTimeout(() => this.flush(), activityDelayMs);
  }

  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const [workspace, entries] of this.queued) {
      this.store.addActivity(workspace, entries);
      this.broadcast(workspace, entries);
    }
    this.queued.clear();
  }
}
