// Secrets of the relay store (relay/relayStore.ts): tokens, credentials and tickets are random and kept as SHA-256
// hashes only; pairing codes, short enough for a human to type, as HMACs under a random per-database salt.

import { createHash, createHmac, randomBytes } from 'node:crypto';

/** Pairing codes: 12 letters of a 32-letter alphabet without look-alikes (60 bits), typed as XXXX-XXXX-XXXX. */
const codeAlphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const codeLength = 12;

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function newSecret(prefix: string): string {
  return `${prefix}_${randomBytes(24).toString('base64url')}`;
}

/** The form a code is hashed in: case, spaces and dashes are the human's, not the code's. */
export function canonicalPairingCode(code: string): string {
  return code.toUpperCase().replace(/[\s-]/g, '');
}

/** A new pairing code, grouped by four for reading aloud. */
export function newPairingCode(): string {
  // 256 is a multiple of 32: every letter equally likely.
  const raw = [...randomBytes(codeLength)].map((byte) => codeAlphabet[byte % codeAlphabet.length]).join('');
  return raw.match(/.{4}/g)?.join('-') ?? raw;
}

export function hashPairingCode(code: string, salt: Buffer): Buffer {
  return createHmac('sha256', salt).update(canonicalPairingCode(code)).digest();
}
