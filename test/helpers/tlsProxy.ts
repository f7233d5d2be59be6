// A TLS-terminating reverse proxy in front of `tabward relay`, as Caddy or nginx would be: https and wss in,
// plain HTTP to 127.0.0.1 out, the Host header kept and `X-Forwarded-Proto: https` added. And the fetch a remote
// agent uses to reach it by its public name: the name resolved to 127.0.0.1, the test certificate trusted and
// checked (no verification switched off).

import { request as httpRequest } from 'node:http';
import { createServer, request as httpsRequest } from 'node:https';
import { type AddressInfo, connect, type LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { generate } from 'selfsigned';

export interface TlsProxy {
  readonly port: number;
  readonly cert: string;
  /** The relay's port, set once it listens. */
  target: number;
  close(): Promise<void>;
}

export async function startTlsProxy(name: string): Promise<TlsProxy> {
  const pems = await generate([{ name: 'commonName', value: name }], { keySize: 2048 });
  const proxy: TlsProxy = {
    port: 0,
    cert: pems.cert,
    target: 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
    const upstream = httpRequest(
      {
        host: '127.0.0.1',
        port: proxy.target,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, 'x-forwarded-proto': 'https' },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('upgrade', (req, socket, head) => {
    const upstream = connect(proxy.target, '127.0.0.1', () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2)
        lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      upstream.write(`${lines.join('\r\n')}\r\nX-Forwarded-Proto: https\r\n\r\n`);
      upstream.write(head);
      socket.pipe(upstream).pipe(socket);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return Object.assign(proxy, { port: (server.address() as AddressInfo).port });
}

const toLoopback = ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
  if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
}) as unknown as LookupFunction;

/** fetch over node:https that trusts `ca` (and only the system's CAs besides) and resolves every name locally. */
export function remoteFetch(ca: string): typeof fetch {
  return (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const outgoing = httpsRequest(
        url,
        {
          method: init.method ?? 'GET',
          headers: Object.fromEntries(new Headers(init.headers).entries()),
          ca,
          lookup: toLoopback,
          ...(init.signal ? { signal: init.signal } : {}),
        },
        (res) => {
          const status = res.statusCode ?? 502;
          const headers = new Headers();
          for (const [key, value] of Object.entries(res.headers))
            if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(', ') : value);
          const empty = [101, 204, 205, 304].includes(status);
          if (empty) res.resume();
          resolve(
            new Response(empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), {
              status,
              headers,
            }),
          );
        },
      );
      outgoing.on('error', reject);
      outgoing.end(typeof init.body === 'string' ? init.body : undefined);
    });
}
