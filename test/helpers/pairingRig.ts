// Fake extensions over real WebSockets against a real `tabward relay` process, for the attacks on pairing and
// revocation (attackPairing.test.ts, attackForeignAnswers.test.ts): pair a browser, get tickets, open sockets that
// record what the relay sends them, share a site, answer locate/ask/call, and read the relay's audit log.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import WebSocket from 'ws';
import { bundledExtensionId, type RelayToExtension } from '../../src/protocol/siteTools.ts';
import { RelayStore } from '../../src/relay/relayStore.ts';
import { connectAgent, type RelayProcess } from './webmcpRig.ts';

export const extensionOrigin = `chrome-extension://${bundledExtensionId}`;
const tools = [
  { name: 'read', description: 'r', inputSchema: { type: 'object' }, readOnly: true },
  { name: 'write', description: 'w', inputSchema: { type: 'object' } },
];

export interface Fake {
  readonly socket: WebSocket;
  readonly closed: Promise<number>;
  readonly messages: (RelayToExtension & { receivedAt: number })[];
  code?: number;
}

/** Where the relay under attack lives: its home (audit log), its SQLite file and its process. */
export interface PairingPlace {
  readonly home: string;
  readonly db: string;
  readonly relay: RelayProcess;
}

/** The helpers of one test file, over the relay `place()` names once its `before` started it. */
export function pairingRig(place: () => PairingPlace) {
  const withStore = <T>(fn: (store: RelayStore) => T): T => {
    const store = new RelayStore(place().db);
    try {
      return fn(store);
    } finally {
      store.close();
    }
  };
  const audit = (): string => {
    try {
      return readFileSync(join(place().home, 'audit.jsonl'), 'utf8');
    } catch {
      return '';
    }
  };
  const post = (path: string, headers: Record<string, string>, body: unknown = {}): Promise<Response> =>
    fetch(`${place().relay.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: extensionOrigin, ...headers },
      body: JSON.stringify(body),
    });
  const pair = async (workspace: string): Promise<{ credential: string; browser: string }> => {
    const code = withStore((s) => s.createPairingCode(workspace, 60_000));
    const response = await post('/pair', {}, { code });
    assert.equal(response.status, 200);
    return (await response.json()) as { credential: string; browser: string };
  };
  const ticketOf = async (credential: string): Promise<{ status: number; ticket?: string }> => {
    const response = await post('/ticket', { authorization: `Bearer ${credential}` });
    return { status: response.status, ...((await response.json()) as { ticket?: string }) };
  };
  const agentFor = async (workspace: string): Promise<Client> => {
    const { token } = withStore((s) => s.createAgentToken(workspace, `agent-${workspace}`));
    return connectAgent(place().relay.url, token);
  };
  /** Opens a socket with a ticket; `opened` settles when the relay admits it (101) or refuses it (status). */
  const socketWith = (ticket: string, autoPong = true): { fake: Fake; opened: Promise<'open' | number> } => {
    const socket = new WebSocket(`${place().relay.url.replace('http', 'ws')}/extension?ticket=${ticket}`, {
      headers: { origin: extensionOrigin },
      autoPong,
    });
    const fake: Fake = {
      socket,
      messages: [],
      closed: new Promise<number>((resolve) =>
        socket.once('close', (code) => {
          fake.code = code;
          resolve(code);
        }),
      ),
    };
    socket.on('message', (data) =>
      fake.messages.push({ ...(JSON.parse(String(data)) as RelayToExtension), receivedAt: Date.now() }),
    );
    socket.on('error', () => undefined);
    const opened = new Promise<'open' | number>((resolve) => {
      socket.once('open', () => resolve('open'));
      socket.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      socket.once('close', (code) => resolve(code));
    });
    return { fake, opened };
  };
  const connect = async (credential: string, autoPong = true): Promise<Fake> => {
    const { ticket } = await ticketOf(credential);
    assert.ok(ticket);
    const { fake, opened } = socketWith(ticket, autoPong);
    assert.equal(await opened, 'open');
    return fake;
  };
  const share = (fake: Fake, origin: string): void =>
    fake.socket.send(
      JSON.stringify({ t: 'sites', sites: [{ origin, url: `${origin}/`, tools, openTabs: 1 }] }),
    );
  /** Answers locate and ask (approve) at once; `call` per `onCall`. */
  const behave = (
    fake: Fake,
    onCall: (message: Extract<RelayToExtension, { t: 'call' }>) => void,
    options: { approve?: boolean } = {},
  ): void => {
    fake.socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as RelayToExtension;
      if (message.t === 'locate')
        fake.socket.send(
          JSON.stringify({
            t: 'located',
            taskId: message.taskId,
            target: { documentId: 'doc-1', url: `${message.site}/page` },
          }),
        );
      if (message.t === 'ask' && options.approve !== false)
        fake.socket.send(JSON.stringify({ t: 'decision', taskId: message.taskId, decision: 'approved' }));
      if (message.t === 'call') onCall(message);
    });
  };
  return { withStore, audit, post, pair, ticketOf, agentFor, socketWith, connect, share, behave };
}
