// A browser session's place beside the other clients of this tabward attached to the same user's Chrome
// (docs/architecture.md "Several clients"): their tabs hidden from it and its from them (clientTabs.ts), one taint
// for the one profile they share (sharedProfileTaint.ts). Joined when a connection to the user's Chrome is
// installed, left when it is dropped.

import { swallow } from '../core/debug.ts';
import type { BrowserConfig, Connection } from './browserConnections.ts';
import { withDeadline } from './deadline.ts';
import type { NetworkGuard } from './networkGuard.ts';
import type { PageRegistry } from './pageRegistry.ts';

export class OtherClients {
  private leaving: (() => void)[] = [];

  constructor(private readonly config: Pick<BrowserConfig, 'clientTabs' | 'profileTaint'>) {}

  /** Whether this session is beside other clients now (attached to the user's Chrome with some to share it). */
  get joined(): boolean {
    return this.leaving.length > 0;
  }

  /**
   * Joins them for a connection being installed (the user's Chrome only: elsewhere each client has its own
   * context), before its tabs are tracked: each is then identified as it is tracked (see identified).
   */
  join(connection: Connection, pages: PageRegistry, network: NetworkGuard | undefined): void {
    if (connection.mode !== 'shared') return;
    const { clientTabs, profileTaint } = this.config;
    if (profileTaint && network) this.leaving.push(network.shareProfileTaint(profileTaint));
    if (clientTabs) this.leaving.push(pages.shareBrowserWith(clientTabs));
  }

  /** Once the owner of every tab tracked now is known (a tab not yet identified is not listed); bounded. */
  async identified(pages: PageRegistry): Promise<void> {
    if (!this.joined) return;
    await withDeadline(pages.identified(), 10_000, 'Reading the tabs of your Chrome').catch(
      swallow('browser', 'otherClients.identified: reading tab ids; tabs not read stay unlisted'),
    );
  }

  /**
   * This session is about to open a tab: the others hide any tab they first see until the function returned is
   * called (the tab is known as this session's, or the opening failed).
   */
  opening(pages: PageRegistry): (() => void) | undefined {
    return this.joined ? this.config.clientTabs?.beginOpening(pages) : undefined;
  }

  leave(): void {
    for (const leave of this.leaving.splice(0)) leave();
  }
}
