// The one-time page of `tabward approvals enroll`: served on 127.0.0.1 as http://localhost:PORT/enroll/TOKEN/ (a
// secure context, so WebAuthn works), it registers a passkey with user verification for human-verified approvals
// and closes once one is enrolled. The address is printed in the user's own terminal, which asked for it.

import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import { Hono } from 'hono';
import { enrol, enrolmentOptions, type Passkey } from './passkeys.ts';

const enrolHtml = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tabward: enroll a passkey</title>
<style>body{font:15px system-ui,sans-serif;margin:2rem auto;max-width:40rem}button{padding:.5rem 1rem}</style>
</head><body><h1>Enroll a passkey for tabward approvals</h1>
<p>With human-verified approvals on, only this passkey (and your PIN, fingerprint or security key) can approve a
write on a sensitive page. Nothing the agent runs can.</p>
<button id="enroll">Enroll a passkey</button><p id="status"></p>
<script>
const base = location.pathname;
const status = (text) => { document.getElementById('status').textContent = text; };
document.getElementById('enroll').onclick = async () => {
  try {
    const options = await (await fetch(base + 'options')).json();
    const credential = await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options) });
    const res = await fetch(base + 'done', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(credential.toJSON()) });
    const body = await res.json();
    status(res.ok ? 'Enrolled. You can close this page.' : 'Not enrolled: ' + body.error);
  } catch (e) { status('Not enrolled: ' + e.name + ' ' + e.message); }
};
</script></body></html>`;

export interface EnrolPage {
  readonly url: string;
  /** Resolves with the passkey once one is enrolled. */
  readonly enrolled: Promise<Passkey>;
  stop(): Promise<void>;
}

export async function startEnrolPage(home: string): Promise<EnrolPage> {
  const token = randomBytes(24).toString('base64url');
  let port = 0;
  let challenge: string | undefined;
  let done: (passkey: Passkey) => void = () => undefined;
  const enrolled = new Promise<Passkey>((resolve) => {
    done = resolve;
  });
  const app = new Hono();
  app.use('*', async (c, next) => {
    if (c.req.header('host') !== `localhost:${port}`)
      return c.text('open the page at its localhost address', 403);
    const site = c.req.header('sec-fetch-site');
    if (site && !['same-origin', 'none'].includes(site))
      return c.text('cross-origin requests are refused', 403);
    await next();
    c.header('Cache-Control', 'no-store');
    c.header('X-Frame-Options', 'DENY');
  });
  app.get(`/enroll/${token}/`, (c) => c.html(enrolHtml));
  app.get(`/enroll/${token}/options`, async (c) => {
    const options = await enrolmentOptions(home);
    challenge = options.challenge;
    return c.json(options);
  });
  app.post(`/enroll/${token}/done`, async (c) => {
    const expected = challenge;
    challenge = undefined;
    if (!expected) return c.json({ error: 'ask for the options first' }, 400);
    try {
      const passkey = await enrol(
        home,
        (await c.req.json()) as RegistrationResponseJSON,
        expected,
        `http://localhost:${port}`,
      );
      done(passkey);
      return c.json({ ok: true });
    } catch (error) {
      return c.json({ error: error instanceof Error ? error.message : String(error) }, 400);
    }
  });
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const started = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info: AddressInfo) => {
      port = info.port;
      resolve(started);
    });
  });
  return {
    url: `http://localhost:${port}/enroll/${token}/`,
    enrolled,
    // The page's last answer ("Enrolled") is still on its way as the passkey resolves: idle connections close now,
    // a busy one gets a second to finish.
    stop: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        if ('closeIdleConnections' in server) server.closeIdleConnections();
        setTimeout(() => {
          if ('closeAllConnections' in server) server.closeAllConnections();
        }, 1_000).unref();
      });
    },
  };
}
