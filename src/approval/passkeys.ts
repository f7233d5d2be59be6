// Human-verified approvals (docs/architecture.md "Consent"): the WebAuthn ceremonies that enroll a passkey and
// prove a person is there. Only an assertion with user verification (a PIN, a fingerprint, Touch ID) on a page of
// tabward's own, for a challenge made for one question, approves a question that needs it: no hook, shell or script
// that holds no authenticator can. The cryptography is @simplewebauthn/server's.

import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import { loadPasskeys, type Passkey, relyingPartyId, savePasskeys } from './passkeyStore.ts';

export type { Passkey };

/** Options for navigator.credentials.create on the enrolment page. */
export function enrolmentOptions(home: string): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return generateRegistrationOptions({
    rpName: 'tabward',
    rpID: relyingPartyId,
    userName: 'tabward approver',
    attestationType: 'none',
    excludeCredentials: loadPasskeys(home).map((key) => ({ id: key.id })),
    authenticatorSelection: { userVerification: 'required', residentKey: 'preferred' },
  });
}

/** Checks the new credential against the challenge and origin and keeps it; the passkey, or why not. */
export async function enrol(
  home: string,
  response: RegistrationResponseJSON,
  challenge: string,
  origin: string,
): Promise<Passkey> {
  const verified = await verifyRegistrationResponse({
    response,
    expectedChallenge: challenge,
    expectedOrigin: origin,
    expectedRPID: relyingPartyId,
    requireUserVerification: true,
  });
  if (!verified.verified || !verified.registrationInfo) throw new Error('the passkey could not be verified');
  const { credential } = verified.registrationInfo;
  const passkey: Passkey = {
    id: credential.id,
    publicKey: Buffer.from(credential.publicKey).toString('base64url'),
    counter: credential.counter,
    enrolledAt: new Date().toISOString(),
    ...(credential.transports ? { transports: credential.transports } : {}),
  };
  savePasskeys(home, [...loadPasskeys(home).filter((key) => key.id !== passkey.id), passkey]);
  return passkey;
}

/** Options for navigator.credentials.get on a question's page: a fresh challenge, user verification required. */
export function assertionOptions(home: string): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return generateAuthenticationOptions({
    rpID: relyingPartyId,
    userVerification: 'required',
    allowCredentials: loadPasskeys(home).map((key) => ({ id: key.id })),
    timeout: 120_000,
  });
}

/**
 * True when `response` is an assertion by an enrolled passkey, with the user verified, for exactly this challenge
 * and origin; its signature counter is kept (a cloned authenticator shows up as a counter going back).
 */
export async function verifyPresence(
  home: string,
  response: AuthenticationResponseJSON,
  challenge: string,
  origin: string,
): Promise<{ ok: true } | { ok: false; why: string }> {
  const passkeys = loadPasskeys(home);
  const passkey = passkeys.find((key) => key.id === response?.id);
  if (!passkey) return { ok: false, why: 'not an enrolled passkey' };
  try {
    const verified = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: origin,
      expectedRPID: relyingPartyId,
      requireUserVerification: true,
      credential: {
        id: passkey.id,
        publicKey: Buffer.from(passkey.publicKey, 'base64url'),
        counter: passkey.counter,
      },
    });
    if (!verified.verified) return { ok: false, why: 'the assertion did not verify' };
    passkey.counter = verified.authenticationInfo.newCounter;
    savePasskeys(home, passkeys);
    return { ok: true };
  } catch (error) {
    return { ok: false, why: error instanceof Error ? error.message : String(error) };
  }
}
