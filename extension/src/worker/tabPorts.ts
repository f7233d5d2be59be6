// Calls reach a document's bridge over one long-lived port per document (chrome.tabs.connect with its
// documentId), opened by the worker on the document's first call and kept while both live. A one-shot
// chrome.tabs.sendMessage opens and closes a channel through the browser process for every call; a port posts
// one message each way. The bridge says `ready` as it accepts the port: a port that closes before that
// delivered nothing (the call surely did not run); one that closes while a call is out leaves its outcome unknown.

import {
  callPortName,
  type TabPortMessage,
  type TabReply,
  type WorkerToTab,
} from '../../../src/protocol/siteTools.ts';

/** The bridge's reply, or why there is none: nothing received the call, or the page went away during it. */
export type PortAnswer = TabReply | 'not_delivered' | 'gone';

interface OpenPort {
  readonly port: chrome.runtime.Port;
  readonly waiting: Map<string, (answer: PortAnswer) => void>;
  ready: boolean;
}

const ports = new Map<string, OpenPort>();

function openPort(tabId: number, documentId: string): OpenPort {
  const known = ports.get(documentId);
  if (known) return known;
  const port = chrome.tabs.connect(tabId, { documentId, name: callPortName });
  const open: OpenPort = { port, waiting: new Map(), ready: false };
  ports.set(documentId, open);
  port.onMessage.addListener((message: TabPortMessage) => {
    if (message?.type === 'ready') open.ready = true;
    else if (message?.type === 'reply') {
      open.waiting.get(message.callId)?.(message);
      open.waiting.delete(message.callId);
    }
  });
  port.onDisconnect.addListener(() => {
    // Read, so Chrome does not report it as unchecked: "Receiving end does not exist" when no bridge listens.
    void chrome.runtime.lastError;
    ports.delete(documentId);
    for (const settle of open.waiting.values()) settle(open.ready ? 'gone' : 'not_delivered');
    open.waiting.clear();
  });
  return open;
}

/** Sends one call to the document's bridge and resolves with its reply (or why there is none). */
export function callDocument(tabId: number, documentId: string, request: WorkerToTab): Promise<PortAnswer> {
  const open = openPort(tabId, documentId);
  return new Promise((resolve) => {
    open.waiting.set(request.callId, resolve);
    try {
      open.port.postMessage(request);
    } catch {
      // The port closed under us before the message left: nothing was delivered.
      open.waiting.delete(request.callId);
      ports.delete(documentId);
      resolve(open.ready ? 'gone' : 'not_delivered');
    }
  });
}
