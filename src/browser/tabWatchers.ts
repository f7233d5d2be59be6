// What watches every tab the browser session tracks, from the moment it is tracked: the network guard's label,
// the devtools log, the download keeper; and a secret typed into a tab growing the session's taint, for the rest of
// the session, with the origin of the document it was typed into as the place it may go.

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
  /** The origins of the documents secrets were typed into, this session. */
  const typedInto = new Set<string>();
  pages.onTrack = (tracked) => {
    network?.label(tracked.page, tracked.id);
    // From the moment a tab is tracked: a user's tab as tabward attaches, a new tab before it navigates.
    devtools?.attach(tracked);
    downloads?.watch(tracked);
    // A secret typed into a tab grows the session's taint: requests to other hosts are judged from then on.
    if (network)
      tracked.onSecretTyped = (origin) => {
        typedInto.add(origin);
        network.taintGrew();
      };
  };
  // Where downloads are taken at their response (no egress proxy: the user's Chrome), they are kept here too.
  if (network && downloads)
    network.responseDownloads = (page) => {
      const tracked = pages.list().find((each) => each.page === page);
      return tracked ? (download) => downloads.takeBody(tracked, download) : undefined;
    };
  // Once tabward typed a secret into a document, every request is judged as after a sensitive read of that
  // document's origin, for the rest of the session: not only while the document lives. The page can keep what was
  // typed (its storage, its service worker, a reload, the request its pagehide sends as the tab closes), and a
  // login frame's host is the secret's place, not the page framing it (docs/architecture.md, "The choke point").
  if (network) network.secretHolders = () => [...typedInto];
}
