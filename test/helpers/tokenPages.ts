// Pieces of fixture pages that bring a sensitive token page's content onto a page of the agent's: how it is shown,
// and a service worker that fetches it on request (taint tests: everySensitiveReadTaints, taintAndSettleVariants).

import type { ServerResponse } from 'node:http';

/** Page script: shows a text (its markup stripped) in the page's #out. */
export const showInOut = `(t) => { document.getElementById('out').textContent = t.replace(/<[^>]*>/g, ' ') }`;

/** A page body that registers /sw.js and shows what it sends back once asked. */
export const serviceWorkerReaderPage = `<p id="out"></p><script>
  navigator.serviceWorker.addEventListener('message', (e) => (${showInOut})(e.data));
  navigator.serviceWorker.register('/sw.js').then(() => navigator.serviceWorker.ready).then((reg) => reg.active.postMessage('go'));
</script>`;

/** Serves /sw.js: a service worker that fetches /settings/tokens when a page messages it and sends the text back. */
export function serveTokenServiceWorker(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/javascript' }).end(
    `self.addEventListener('install', () => self.skipWaiting());
     self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
     self.addEventListener('message', (e) => fetch('/settings/tokens').then((r) => r.text()).then((t) => e.source.postMessage(t)));`,
  );
}
