// What watches every tab the browser session tracks, from the moment it is tracked: the network guard's label,
// the devtools log, the download keeper; a secret typed into a tab growing the session's taint; and the origins
// of tabs holding a typed secret, which the choke point judges every request against.

import type { DevtoolsRecorder } from './devtoolsLog.ts';
import type { DownloadKeeper } from './downloads.ts';
import type { NetworkGuard } from './networkGuard.ts';
import type { PageRegistry } from './pageRegistry.ts';

export function watchTrackedTabs(
  pages: PageRegistry,
  network: NetworkGuard | undefined,
  devtools: DevtoolsRecorder | undefined,
  downloads: DownloadKeeper | undefined,
): void {
  pages.onTrack = (tracked) => {
    network?.label(tracked.page, tracked.id);
    // From the moment a tab is tracked: a user's tab as tabward attaches, a new tab before it navigates.
    devtools?.attach(tracked);
    downloads?.watch(tracked);
    // A secret typed into a tab grows the session's taint: requests to other hosts are judged from then on.
    if (network) tracked.onSecretTyped = () => network.taintGrew();
  };
  // Where downloads are taken at their response (no egress proxy: the user's Chrome), they are kept here too.
  if (network && downloads)
    network.responseDownloads = (page) => {
      const tracked = pages.list().find((each) => each.page === page);
      return tracked ? (download) => downloads.takeBody(tracked, download) : undefined;
    };
  // While a tab holds a secret tabward typed, the choke point judges every request as after a sensitive read.
  if (network)
    network.secretHolders = () =>
      pages
        .list()
        .filter((tracked) => tracked.holdsTypedSecret)
        .flatMap((tracked) => originsOf(tracked.page.url()));
}

function originsOf(url: string): string[] {
  try {
    const { origin } = new URL(url);
    return origin === 'null' ? [] : [origin];
  } catch {
    return [];
  }
}
