// The relay store's pairing codes and file modes: long codes, salted hashes (never the code, never its plain
// SHA-256), one use, expiry, and a database only its owner can read.

import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import {
  canonicalPairingCode,
  hashPairingCode,
  hashSecret,
  newPairingCode,
  RelayStore,
} from '../../../src/relay/relayStore.ts';

const dir = mkdtempSync(join(tmpdir(), 'tabward-store-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const mode = (file: string) => statSync(file).mode & 0o777;
const storedHashes = (file: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare('select code_hash from pairing_codes').all() as { code_hash: string }[]).map(
      (row) => row.code_hash,
    );
  } finally {
    db.close();
  }
};

test('codes are 12 letters of a 32-letter alphabet (60 bits), grouped by four, all different', () => {
  const codes = Array.from({ length: 200 }, newPairingCode);
  for (const code of codes) assert.match(code, /^[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}$/);
  assert.equal(new Set(codes).size, codes.length);
  assert.equal(canonicalPairingCode(' abcd-efgh jklm '), 'ABCDEFGHJKLM');
});

test('the hash is salted: another salt, another hash; the plain SHA-256 of the code is not stored', () => {
  const code = 'ABCD-EFGH-JKLM';
  const one = hashPairingCode(code, Buffer.alloc(32, 1));
  assert.deepEqual(hashPairingCode('abcdefghjklm', Buffer.alloc(32, 1)), one, 'case and dashes do not count');
  assert.notDeepEqual(hashPairingCode(code, Buffer.alloc(32, 2)), one);
  const file = join(dir, 'salted.db');
  const store = new RelayStore(file);
  const created = store.createPairingCode('team', 60_000);
  store.close();
  const [stored] = storedHashes(file);
  assert.ok(stored);
  assert.notEqual(stored, hashSecret(created));
  assert.notEqual(stored, hashSecret(canonicalPairingCode(created)));
  assert.ok(!stored.includes(canonicalPairingCode(created)));
});

test('two databases salt the same code differently', () => {
  const hashes = ['a.db', 'b.db'].map((name) => {
    const file = join(dir, name);
    const store = new RelayStore(file);
    store.createPairingCode('team', 60_000);
    store.close();
    return storedHashes(file)[0];
  });
  // Same workspace, different random codes anyway; what matters is that each store has its own salt.
  const salts = ['a.db', 'b.db'].map((name) => {
    const db = new Database(join(dir, name), { readonly: true });
    const row = db.prepare("select value from meta where key = 'pairing_salt'").get() as { value: string };
    db.close();
    return row.value;
  });
  assert.notEqual(salts[0], salts[1]);
  assert.equal(salts[0]?.length, 64);
  assert.notEqual(hashes[0], hashes[1]);
});

test('a code redeems once, typed in any case and spacing; wrong and expired codes do not', () => {
  const file = join(dir, 'redeem.db');
  const store = new RelayStore(file);
  try {
    const code = store.createPairingCode('team', 60_000);
    const other = store.createPairingCode('other', 60_000);
    assert.equal(store.redeemPairingCode('ABCD-EFGH-JKLM'), undefined);
    assert.equal(store.redeemPairingCode(code.slice(0, -1)), undefined);
    const typed = ` ${code.toLowerCase().replaceAll('-', ' ')} `;
    assert.equal(store.redeemPairingCode(typed)?.extension.workspace, 'team');
    assert.equal(store.redeemPairingCode(code), undefined, 'used once');
    assert.equal(store.redeemPairingCode(other)?.extension.workspace, 'other');
    const expired = store.createPairingCode('team', -1);
    assert.equal(store.redeemPairingCode(expired), undefined);
  } finally {
    store.close();
  }
  const reopened = new RelayStore(file);
  try {
    const code = reopened.createPairingCode('team', 60_000);
    assert.ok(reopened.redeemPairingCode(code), 'the salt survives a restart');
  } finally {
    reopened.close();
  }
});

test('the database and its -wal/-shm are 0600, also when an older version left them open', () => {
  const file = join(dir, 'modes.db');
  const store = new RelayStore(file);
  store.createAgentToken('team', 'x');
  for (const path of [file, `${file}-wal`, `${file}-shm`]) assert.equal(mode(path), 0o600, path);
  store.close();
  const open = join(dir, 'open.db');
  writeFileSync(open, '');
  chmodSync(open, 0o644);
  new RelayStore(open).close();
  assert.equal(mode(open), 0o600);
});

test('a store made before browsers could be revoked gains the columns, and its browsers stay paired until revoked', () => {
  const file = join(dir, 'old.db');
  const old = new Database(file);
  old.exec(`create table extensions (id text primary key, workspace text not null,
    credential_hash text not null unique, created_at text not null);
    create table tasks (id text primary key, workspace text not null, agent text not null, origin text not null,
    tool text not null, status text not null, created_at text not null, ended_at text);`);
  old
    .prepare('insert into extensions values (?, ?, ?, ?)')
    .run('ext-old', 'team', hashSecret('twe_old'), new Date().toISOString());
  old.close();
  const store = new RelayStore(file);
  try {
    assert.deepEqual(store.extensionByCredential('twe_old'), {
      id: 'ext-old',
      workspace: 'team',
      revoked: false,
    });
    const ticket = store.issueTicket('ext-old', 60_000);
    const spare = store.issueTicket('ext-old', 60_000);
    assert.equal(typeof store.spendTicket(ticket), 'object');
    store.saveSites({ id: 'ext-old', workspace: 'team' }, [
      { origin: 'https://a.example', url: 'https://a.example/', tools: [], openTabs: 1 },
    ]);
    assert.equal(store.sites('team').length, 1);
    assert.equal(store.revokeExtension('ext-old'), true);
    assert.equal(store.revokeExtension('ext-old'), false, 'once');
    assert.equal(store.extensionByCredential('twe_old')?.revoked, true);
    assert.equal(store.isExtensionRevoked('ext-old'), true);
    assert.equal(store.spendTicket(spare), 'unknown', 'its unspent tickets died with it');
    assert.deepEqual(store.sites('team'), [], 'its sites left the list');
    assert.deepEqual(
      store.listExtensions().map((b) => [b.id, b.revoked]),
      [['ext-old', true]],
    );
  } finally {
    store.close();
  }
});

test('a revocation written by another process empties the running store’s cached site list', () => {
  const file = join(dir, 'two-processes.db');
  const relay = new RelayStore(file);
  const cli = new RelayStore(file);
  try {
    const code = relay.createPairingCode('team', 60_000);
    const paired = relay.redeemPairingCode(code);
    assert.ok(paired);
    relay.saveSites(paired.extension, [
      { origin: 'https://a.example', url: 'https://a.example/', tools: [], openTabs: 1 },
    ]);
    assert.equal(relay.sites('team').length, 1);
    assert.equal(cli.revokeExtension(paired.extension.id), true);
    assert.deepEqual(relay.sites('team'), []);
  } finally {
    cli.close();
    relay.close();
  }
});
