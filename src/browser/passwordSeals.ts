// Seals of the values a form's question does not show (a password's, or a field's holding one; browser/elements.ts
// sealedFacts): an HMAC under a key this process makes at start and never writes or shows, so that the approval's
// pass can bind what the post carries there (core/formBodies.ts) without the value being kept anywhere.

import { createHmac, randomBytes } from 'node:crypto';
import type { Seal } from '../core/formBodies.ts';

const key = randomBytes(32);

/** Line breaks as the browser sends a form's (CR LF) and as a page holds them (LF): one and the same value. */
export const passwordSeal: Seal = (value) =>
  createHmac('sha256', key).update(value.replace(/\r\n?/g, '\n')).digest('base64');
