// The WebSocket gate of the browsers tabward starts: Chromium pauses no WebSocket handshake (CDP Fetch never sees
// one) and Playwright's WebSocket route lives in each page's JavaScript, so a dedicated or service worker's socket,
// or one opened through a blank popup, passed unjudged. A proxy auto-config script sends every ws: and wss:
// connection (and nothing else) through this local proxy, which learns only the host and port of each (a CONNECT)
// and judges them as a request with no page: after a sensitive read, only hosts read or allowed this session.
// What a page's own socket carries in its address is judged before, by the page's route.

import { createServer, type Socket, connect as tcpConnect } from 'node:net';

export interface SocketGate {
  /** The Chromium switches that send every WebSocket through the gate. */
  readonly chromeArgs: readonly string[];
  /** Where it listens on 127.0.0.1: one of tabward's own ports, never a page's to reach. */
  readonly port: number;
  close(): void;
}

/** Resolves with a reason to refuse, or undefined to let the socket through. */
export type SocketJudge = (host: string, port: number) => Promise<string | undefined>;

/** Where a host name is reached: as Chromium's --host-resolver-rules would send it (tests map every name). */
export type HostMapper = (host: string) => string;

export async function startSocketGate(judge: SocketJudge, mapHost: HostMapper): Promise<SocketGate> {
  const open = new Set<Socket>();
  const server = createServer((client) => {
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => client.destroy());
    let head = '';
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > 16_384) client.destroy();
        return;
      }
      client.off('data', onData);
      client.pause();
      void tunnel(client, head.slice(0, end), Buffer.from(head.slice(end + 4), 'latin1'));
    };
    client.on('data', onData);
  });
  const tunnel = async (client: Socket, request: string, rest: Buffer) => {
    const target = /^CONNECT (\[[^\]]+\]|[^\s:]+):(\d+) HTTP\/1\.[01]/.exec(request);
    if (!target?.[1] || !target[2]) {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    const host = target[1].replace(/^\[|\]$/g, '');
    const port = Number(target[2]);
    const refused = await judge(host, port).catch(
      (error: unknown) => `it could not be judged (${String(error)})`,
    );
    if (refused) {
      client.end(
        `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n\r\ntabward stopped this WebSocket: ${refused}\n`,
      );
      return;
    }
    const upstream = tcpConnect(port, mapHost(host));
    open.add(upstream);
    upstream.on('close', () => open.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.once('connect', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (rest.length > 0) upstream.write(rest);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
  };
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as { port: number };
  const pac = `function FindProxyForURL(url, host) {
  var scheme = url.substring(0, url.indexOf(':')).toLowerCase();
  return scheme === 'ws' || scheme === 'wss' ? 'PROXY 127.0.0.1:${port}' : 'DIRECT';
}`;
  return {
    // Chromium never hands a loopback address to a proxy script (a bypass list applies to --proxy-server only):
    // sockets to 127.0.0.1 and localhost go direct, a documented residual (docs/security.md).
    chromeArgs: [
      `--proxy-pac-url=data:application/x-ns-proxy-autoconfig;base64,${Buffer.from(pac).toString('base64')}`,
    ],
    port,
    close: () => {
      server.close();
      for (const socket of open) socket.destroy();
    },
  };
}

/**
 * Host mapping as given by --host-resolver-rules among the browser's switches: `MAP pattern target` rules (a `*`
 * matches any run of characters), first match wins; anything else is resolved normally.
 */
export function hostMapperFrom(args: readonly string[]): HostMapper {
  const rules = args
    .filter((arg) => arg.startsWith('--host-resolver-rules='))
    .flatMap((arg) => arg.slice('--host-resolver-rules='.length).split(','))
    .map((rule) => rule.trim().split(/\s+/))
    .filter((parts) => parts[0]?.toUpperCase() === 'MAP' && parts.length === 3)
    .map(([, pattern = '', target = '']) => ({
      test: new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`, 'i'),
      target: target.replace(/:\d+$/, ''),
    }));
  return (host) => rules.find((rule) => rule.test.test(host))?.target ?? host;
}

/**
 * The proxy the user set for the browser, if any (a --proxy-* switch, or the proxy variables Chromium reads on
 * Linux): the gate's proxy script would replace it, so there the gate stays off and tabward says so.
 */
export function configuredProxy(args: readonly string[], env: NodeJS.ProcessEnv): string | undefined {
  const flag = args.find((arg) =>
    /^--(proxy-server|proxy-pac-url|proxy-auto-detect|no-proxy-server)\b/.test(arg),
  );
  if (flag) return flag.split('=')[0];
  const variable = ['https_proxy', 'http_proxy', 'all_proxy', 'HTTPS_PROXY', 'HTTP_PROXY', 'ALL_PROXY'].find(
    (name) => (env[name] ?? '').trim() !== '',
  );
  return variable ? `$${variable}` : undefined;
}
