// The relay's SQLite file (relay/relayStore.ts): its tables, the columns later versions added (older stores gain
// them on open), and its modes: the file and its -wal/-shm are its owner's only.

import { chmodSync, closeSync, existsSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';

const schema = `
create table if not exists agents (id text primary key, workspace text not null, name text not null,
  token_hash text not null unique, created_at text not null, revoked_at text);
create table if not exists extensions (id text primary key, workspace text not null,
  credential_hash text not null unique, created_at text not null, revoked_at text);
create table if not exists pairing_codes (code_hash text primary key, workspace text not null,
  expires_at integer not null);
create table if not exists tickets (ticket_hash text primary key, extension_id text not null,
  expires_at integer not null, used integer not null default 0);
create table if not exists shared_sites (workspace text not null, extension_id text not null,
  origin text not null, url text not null, tools_json text not null, updated_at text not null,
  primary key (workspace, extension_id, origin));
create table if not exists permissions (workspace text not null, origin text not null, tool text not null,
  created_at text not null, primary key (workspace, origin, tool));
create table if not exists tasks (id text primary key, workspace text not null, agent text not null,
  origin text not null, tool text not null, status text not null, created_at text not null, ended_at text,
  browser text);
create table if not exists activity (seq integer primary key autoincrement, workspace text not null,
  entry_json text not null);
create table if not exists meta (key text primary key, value text not null);
create table if not exists call_keys (agent_id text not null, key text not null, task_id text not null,
  state text not null, outcome_json text, updated_at integer not null, primary key (agent_id, key));
create index if not exists call_keys_task on call_keys (task_id);
`;

/** Opens (or creates) the store: owner-only, WAL, every table and column there. */
export function openStore(file: string): Database.Database {
  const onDisk = file !== ':memory:' && file !== '';
  if (onDisk) makePrivate(file);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  // In WAL mode NORMAL survives a crash of the relay (only a power cut can lose the last commits) and saves
  // an fsync on each of a call's writes (task, activity, key): ~0.5 ms each on this kind of disk.
  db.pragma('synchronous = NORMAL');
  db.exec(schema);
  // A key names one call (site, tool, arguments): stores made before that was kept gain the column.
  const keyColumns = db.pragma('table_info(call_keys)') as { name: string }[];
  if (!keyColumns.some((column) => column.name === 'call_hash'))
    db.exec("alter table call_keys add column call_hash text not null default ''");
  // Unpairing revokes a browser at the relay: stores made before that was kept gain the column.
  const extensionColumns = db.pragma('table_info(extensions)') as { name: string }[];
  if (!extensionColumns.some((column) => column.name === 'revoked_at'))
    db.exec('alter table extensions add column revoked_at text');
  // Only the browser a call was sent to may answer it late: stores made before that gain the column.
  const taskColumns = db.pragma('table_info(tasks)') as { name: string }[];
  if (!taskColumns.some((column) => column.name === 'browser'))
    db.exec('alter table tasks add column browser text');
  // SQLite gives -wal and -shm the database's mode; older versions of tabward left them open.
  if (onDisk) for (const side of [`${file}-wal`, `${file}-shm`]) if (existsSync(side)) chmodSync(side, 0o600);
  return db;
}

/** Creates the file for its owner only, or takes group and other access away from an existing one. */
function makePrivate(file: string): void {
  if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
  chmodSync(file, 0o600);
}
