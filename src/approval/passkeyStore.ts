// The passkeys enrolled with `tabward approvals enroll` for human-verified approvals (docs/architecture.md
// "Consent"): passkeys.json in the home, 0600, holding public keys and signature counters only. Kept apart from
// the WebAuthn ceremonies (passkeys.ts) so that checking for one loads no crypto library at start-up.

import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** WebAuthn relying party: tabward's pages are served as http://localhost:PORT (a secure context). */
export const relyingPartyId = 'localhost';

export interface Passkey {
  /** The credential id, base64url. */
  readonly id: string;
  /** The COSE public key, base64url. */
  readonly publicKey: string;
  counter: number;
  readonly enrolledAt: string;
  readonly transports?: readonly string[];
}

export function passkeysPath(home: string): string {
  return join(home, 'passkeys.json');
}

export function loadPasskeys(home: string): Passkey[] {
  const path = passkeysPath(home);
  if (!existsSync(path)) return [];
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as { passkeys?: Passkey[] };
    return Array.isArray(parsed.passkeys) ? parsed.passkeys : [];
  } catch (error) {
    throw new Error(
      `${path} is not readable JSON (${String(error)}); enroll again with tabward approvals enroll`,
    );
  }
}

export function savePasskeys(home: string, passkeys: readonly Passkey[]): void {
  const path = passkeysPath(home);
  writeFileSync(path, `${JSON.stringify({ passkeys }, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
}
