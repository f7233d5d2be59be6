// What watches every tab the browser session tracks, from the moment it is tracked: the network guard's label,
// the devtools log, the download keeper; and a secret typed into a tab tainting the sessions watching, for good,
// with the origin of the document it was typed into as the place it may go (RequestTaint.secretTyped).

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
    // A secret typed into a tab taints the session: requests to other hosts are judged from then on.
    if (network) tracked.onSecretTyped = (origin) => network.secretTyped(origin);
  };
  // Where downloads are taken at their response (no egress proxy: the user's Chrome), they are kept here too.
  if (network && downloads)
    network.responseDownloads = (page) => {
      const tracked = pages.list().find((each) => each.page === page);
      return tracked ? (download) => downloads.takeBody(tracked, download) : undefined;
    };
}
