// Certificates for the egress proxy's TLS ends (browser/egressProxy.ts): one P-256 key per proxy, made at start and
// never written anywhere, and for each host the browser asks for a certificate naming that host, signed with that
// key. The browser trusts that key alone, by its SPKI hash (--ignore-certificate-errors-spki-list, a switch of that
// one browser process): nothing is installed in any trust store, and no other program accepts these certificates.
//
// Written with Node's crypto and a small DER writer rather than an X.509 library: the certificate has one fixed
// shape, and @peculiar/x509 cost 0.9 s to load and 15-40 ms a host here (a first request to each site waits on it).

import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import { isIP } from 'node:net';
import { createSecureContext, type SecureContext } from 'node:tls';

export interface HostCertificates {
  /** The Chromium switch that makes the browser trust this key, and only for itself. */
  readonly chromeArg: string;
  /** A TLS context presenting a certificate for `host` (a name or an IP address), made once per host. */
  contextFor(host: string): SecureContext;
}

export function makeHostCertificates(): HostCertificates {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const contexts = new Map<string, SecureContext>();
  return {
    chromeArg: `--ignore-certificate-errors-spki-list=${createHash('sha256').update(spki).digest('base64')}`,
    contextFor(host) {
      const name = host.toLowerCase();
      let context = contexts.get(name);
      if (!context) {
        const cert = certificatePem(name, spki, privateKey);
        context = createSecureContext({ key: keyPem, cert });
        // A page can name any number of hosts; the cache must not grow without bound.
        if (contexts.size >= 500) contexts.clear();
        contexts.set(name, context);
      }
      return context;
    },
  };
}

const oids = {
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  extendedKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
};

/** An X.509 v3 leaf certificate for one host, valid from a day ago for a week, self-signed with `key`. */
function certificatePem(host: string, spki: Buffer, key: KeyObject): string {
  const algorithm = seq(oid(oids.ecdsaWithSha256));
  const name = seq(set(seq(oid(oids.commonName), tlv(0x0c, Buffer.from('tabward egress proxy')))));
  const day = 86_400_000;
  const bare = host.replace(/^\[|\]$/g, '');
  const altName = isIP(bare) === 0 ? tlv(0x82, Buffer.from(bare, 'ascii')) : tlv(0x87, ipBytes(bare));
  const extensions = tlv(
    0xa3,
    seq(
      seq(oid(oids.basicConstraints), tlv(0x01, Buffer.from([0xff])), octets(seq())),
      seq(oid(oids.extendedKeyUsage), octets(seq(oid(oids.serverAuth)))),
      seq(oid(oids.subjectAltName), octets(seq(altName))),
    ),
  );
  const tbs = seq(
    tlv(0xa0, integer(Buffer.from([2]))),
    serialNumber(),
    algorithm,
    name,
    seq(utcTime(new Date(Date.now() - day)), utcTime(new Date(Date.now() + 7 * day))),
    name,
    spki,
    extensions,
  );
  const signature = sign('sha256', tbs, key);
  const der = seq(tbs, algorithm, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}

function tlv(tag: number, content: Buffer): Buffer {
  const length = content.length;
  if (length < 0x80) return Buffer.concat([Buffer.from([tag, length]), content]);
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest >>= 8) bytes.unshift(rest & 0xff);
  return Buffer.concat([Buffer.from([tag, 0x80 | bytes.length, ...bytes]), content]);
}

const seq = (...parts: Buffer[]) => tlv(0x30, Buffer.concat(parts));
const set = (...parts: Buffer[]) => tlv(0x31, Buffer.concat(parts));
const octets = (content: Buffer) => tlv(0x04, content);

/** A random positive serial of minimal DER form: its first byte neither zero nor with the sign bit. */
function serialNumber(): Buffer {
  const bytes = randomBytes(12);
  bytes[0] = ((bytes[0] ?? 1) & 0x7f) | 0x01;
  return integer(bytes);
}

/** A positive INTEGER: a leading zero byte keeps a high first bit from reading as a sign. */
function integer(bytes: Buffer): Buffer {
  const first = bytes[0] ?? 0;
  return tlv(0x02, first & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
}

function oid(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [first * 40 + second];
  for (const arc of rest) {
    const chunk = [arc & 0x7f];
    for (let value = arc >> 7; value > 0; value >>= 7) chunk.unshift((value & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

function utcTime(date: Date): Buffer {
  const text = date.toISOString().replace(/[-:T]/g, '').slice(2, 14);
  return tlv(0x17, Buffer.from(`${text}Z`, 'ascii'));
}

function ipBytes(address: string): Buffer {
  if (isIP(address) === 4) return Buffer.from(address.split('.').map(Number));
  // IPv6: expand "::" and write the eight groups.
  const [head = '', tail = ''] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = address.includes('::') ? (tail ? tail.split(':') : []) : [];
  const groups = [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return Buffer.from(
    groups.flatMap((group) => [(Number.parseInt(group, 16) >> 8) & 0xff, Number.parseInt(group, 16) & 0xff]),
  );
}
