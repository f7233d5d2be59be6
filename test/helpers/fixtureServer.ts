// A fixture web server for tests: routes as functions, every request recorded, plain HTTP or TLS with a
// throwaway self-signed certificate (Chromium's HSTS preload list forces https for github.com and others).

import {
  createServer as createHttp,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttps } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { generate } from 'selfsigned';

export interface Seen {
  readonly method: string;
  readonly host: string;
  readonly path: string;
  readonly body: string;
  readonly cookie: string;
}

export type Route = (req: IncomingMessage, body: string, res: ServerResponse) => void | Promise<void>;

export interface Fixture {
  readonly port: number;
  /** https://HOST:PORT or http://HOST:PORT for a host name the test browser maps to 127.0.0.1. */
  url(host: string, path?: string): string;
  readonly seen: Seen[];
  /** Requests that could change state (anything but GET and HEAD). */
  writes(): Seen[];
  /** Takes the server's WebSocket (and other upgrade) requests. */
  onUpgrade(handler: (req: IncomingMessage, socket: Duplex, head: Buffer) => void): void;
  close(): Promise<void>;
}

export async function startFixture(
  routes: Record<string, Route>,
  options: {
    tls?: boolean;
    /** Awaited before a request's body is read (a server slow to take a large upload). */
    beforeBody?: (req: IncomingMessage) => Promise<void> | undefined;
  } = {},
): Promise<Fixture> {
  const seen: Seen[] = [];
  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    await options.beforeBody?.(req);
    let body = '';
    for await (const chunk of req) body += String(chunk);
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    seen.push({
      method: req.method ?? '',
      host: req.headers.host ?? '',
      path: req.url ?? '',
      body,
      cookie: req.headers.cookie ?? '',
    });
    const route = routes[`${req.method} ${path}`] ?? routes[path];
    if (!route) {
      res.writeHead(404, { 'content-type': 'text/html' }).end('<title>Not found</title><h1>Not found</h1>');
      return;
    }
    await route(req, body, res);
  };
  // Heads as large as Chromium sends (a long URL, large headers): Node's 16 KiB default would answer 431 itself.
  const heads = { maxHeaderSize: 4 * 2 ** 20 };
  const server: Server = options.tls
    ? createHttps({ ...(await certificate()), ...heads }, handler)
    : createHttp(heads, handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  const scheme = options.tls ? 'https' : 'http';
  return {
    port,
    url: (host, path = '/') => `${scheme}://${host}:${port}${path}`,
    seen,
    writes: () => seen.filter((request) => request.method !== 'GET' && request.method !== 'HEAD'),
    onUpgrade: (handler) => {
      server.on('upgrade', handler);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function certificate(): Promise<{ key: string; cert: string }> {
  const pems = await generate([{ name: 'commonName', value: 'tabward-test' }], { keySize: 2048 });
  return { key: pems.private, cert: pems.cert };
}

export function html(
  res: ServerResponse,
  body: string,
  status = 200,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers }).end(body);
}

export function redirect(res: ServerResponse, location: string, headers: Record<string, string> = {}): void {
  res.writeHead(302, { location, ...headers }).end();
}

/** Chromium flags every test browser gets: every name resolves to 127.0.0.1; the test certificate is accepted. */
export const testChromeArgs = ['--host-resolver-rules=MAP * 127.0.0.1', '--ignore-certificate-errors'];
