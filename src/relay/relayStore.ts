// The relay's state in one SQLite file (better-sqlite3): workspaces, agent tokens, paired extensions, pairing
// codes, tickets, shared sites with their last known tools, standing permissions, tasks, the calls' idempotency
// keys and the activity feed.
// Secrets (tokens, credentials, tickets) are stored as SHA-256 hashes only; pairing codes, short enough for a
// human to type, as HMACs under a random per-database salt. The file and its -wal/-shm are its owner's only.

import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, closeSync, existsSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { ActivityEntry, SharedSiteState, SiteTool } from '../protocol/siteTools.ts';

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

/** How long the relay remembers an idempotency key. */
const keyLifetimeMs = 24 * 3_600_000;

/**
 * What the relay knows about the call an idempotency key names: still running, done (its outcome kept, as
 * the agent was told it), or unknown (it reached the page and no answer came back).
 */
export interface KeyRecord {
  readonly taskId: string;
  /** What call the key was first given for (a hash of its site, tool and arguments; '' in older stores). */
  readonly callHash: string;
  readonly state: 'running' | 'done' | 'unknown';
  /** For `done`: what the agent got (a JSON CallOutcome); for `unknown`: why. */
  readonly detail: string;
}

interface KeyRow {
  readonly task_id: string;
  readonly state: KeyRecord['state'];
  readonly outcome_json: string | null;
  readonly call_hash: string;
}

function keyRecordOf(row: KeyRow): KeyRecord {
  return { taskId: row.task_id, state: row.state, detail: row.outcome_json ?? '', callHash: row.call_hash };
}

/** Pairing codes: 12 letters of a 32-letter alphabet without look-alikes (60 bits), typed as XXXX-XXXX-XXXX. */
const codeAlphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const codeLength = 12;

export interface AgentRecord {
  readonly id: string;
  readonly workspace: string;
  readonly name: string;
}

export interface ExtensionRecord {
  readonly id: string;
  readonly workspace: string;
}

/** A paired browser as `tabward relay browsers list` shows it. */
export interface BrowserListing extends ExtensionRecord {
  readonly createdAt: string;
  readonly revoked: boolean;
  readonly sharedSites: number;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

function newSecret(prefix: string): string {
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

/** Creates the file for its owner only, or takes group and other access away from an existing one. */
function makePrivate(file: string): void {
  if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
  chmodSync(file, 0o600);
}

export class RelayStore {
  private readonly db: Database.Database;
  private readonly pairingSalt: Buffer;
  /** Prepared once: preparing a statement costs more than running it, and every call runs several. */
  private readonly statements = new Map<string, Database.Statement>();
  private readonly sitesByWorkspace = new Map<string, { origin: string; url: string; tools: SiteTool[] }[]>();
  /** SQLite's count of commits by other connections when sitesByWorkspace was last trusted. */
  private dataVersion = -1;

  constructor(file: string) {
    const onDisk = file !== ':memory:' && file !== '';
    if (onDisk) makePrivate(file);
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    // In WAL mode NORMAL survives a crash of the relay (only a power cut can lose the last commits) and saves
    // an fsync on each of a call's writes (task, activity, key): ~0.5 ms each on this kind of disk.
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(schema);
    // A key names one call (site, tool, arguments): stores made before that was kept gain the column.
    const keyColumns = this.db.pragma('table_info(call_keys)') as { name: string }[];
    if (!keyColumns.some((column) => column.name === 'call_hash'))
      this.db.exec("alter table call_keys add column call_hash text not null default ''");
    // Unpairing revokes a browser at the relay: stores made before that was kept gain the column.
    const extensionColumns = this.db.pragma('table_info(extensions)') as { name: string }[];
    if (!extensionColumns.some((column) => column.name === 'revoked_at'))
      this.db.exec('alter table extensions add column revoked_at text');
    // Only the browser a call was sent to may answer it late: stores made before that gain the column.
    const taskColumns = this.db.pragma('table_info(tasks)') as { name: string }[];
    if (!taskColumns.some((column) => column.name === 'browser'))
      this.db.exec('alter table tasks add column browser text');
    // SQLite gives -wal and -shm the database's mode; older versions of tabward left them open.
    if (onDisk)
      for (const side of [`${file}-wal`, `${file}-shm`]) if (existsSync(side)) chmodSync(side, 0o600);
    this.pairingSalt = this.salt('pairing_salt');
  }

  /** The https URL the relay is reached at through a TLS proxy (`relay --public-url`), as its last start said. */
  publicUrl(): string | undefined {
    const row = this.sql('select value from meta where key = ?').get('public_url') as
      | { value: string }
      | undefined;
    return row?.value;
  }

  setPublicUrl(url: string | undefined): void {
    if (url === undefined) this.sql('delete from meta where key = ?').run('public_url');
    else this.sql('insert or replace into meta (key, value) values (?, ?)').run('public_url', url);
  }

  private salt(key: string): Buffer {
    const row = this.sql('select value from meta where key = ?').get(key) as { value: string } | undefined;
    if (row) return Buffer.from(row.value, 'hex');
    const fresh = randomBytes(32);
    this.sql('insert into meta (key, value) values (?, ?)').run(key, fresh.toString('hex'));
    return fresh;
  }

  private sql(text: string): Database.Statement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  }

  close(): void {
    this.db.close();
  }

  createAgentToken(workspace: string, name: string): { token: string; agent: AgentRecord } {
    const token = newSecret('twa');
    const agent = { id: `agent-${randomBytes(4).toString('hex')}`, workspace, name };
    this.sql('insert into agents (id, workspace, name, token_hash, created_at) values (?, ?, ?, ?, ?)').run(
      agent.id,
      workspace,
      name,
      hashSecret(token),
      new Date().toISOString(),
    );
    return { token, agent };
  }

  /** A workspace exists once a browser is paired with it, a pairing code is out for it, or an agent is in it. */
  hasWorkspace(workspace: string): boolean {
    return (
      this.sql(
        'select 1 from extensions where workspace = ? union select 1 from pairing_codes where workspace = ? union select 1 from agents where workspace = ?',
      ).get(workspace, workspace, workspace) !== undefined
    );
  }

  listAgents(): (AgentRecord & { createdAt: string; revoked: boolean })[] {
    return this.sql('select id, workspace, name, created_at, revoked_at from agents order by created_at')
      .all()
      .map((row) => {
        const r = row as {
          id: string;
          workspace: string;
          name: string;
          created_at: string;
          revoked_at: string;
        };
        return {
          id: r.id,
          workspace: r.workspace,
          name: r.name,
          createdAt: r.created_at,
          revoked: !!r.revoked_at,
        };
      });
  }

  revokeAgent(id: string): boolean {
    const result = this.sql('update agents set revoked_at = ? where id = ? and revoked_at is null').run(
      new Date().toISOString(),
      id,
    );
    return result.changes > 0;
  }

  agentByToken(token: string): AgentRecord | undefined {
    const row = this.sql(
      'select id, workspace, name from agents where token_hash = ? and revoked_at is null',
    ).get(hashSecret(token));
    return row as AgentRecord | undefined;
  }

  /** A code a human types into the popup; valid for `lifetimeMs`, used once. */
  createPairingCode(workspace: string, lifetimeMs: number): string {
    const code = newPairingCode();
    this.sql('insert into pairing_codes (code_hash, workspace, expires_at) values (?, ?, ?)').run(
      hashPairingCode(code, this.pairingSalt).toString('hex'),
      workspace,
      Date.now() + lifetimeMs,
    );
    return code;
  }

  /** Spends a pairing code and returns the new extension's credential, or undefined if the code is bad. */
  redeemPairingCode(code: string): { credential: string; extension: ExtensionRecord } | undefined {
    const given = hashPairingCode(code, this.pairingSalt);
    const take = this.db.transaction(() => {
      this.sql('delete from pairing_codes where expires_at < ?').run(Date.now());
      const rows = this.sql('select code_hash, workspace from pairing_codes').all() as {
        code_hash: string;
        workspace: string;
      }[];
      // Every live code is compared, each in constant time: no early exit says how close a guess came.
      let row: (typeof rows)[number] | undefined;
      for (const candidate of rows) {
        const stored = Buffer.from(candidate.code_hash, 'hex');
        if (stored.length === given.length && timingSafeEqual(stored, given)) row = candidate;
      }
      if (!row) return undefined;
      this.sql('delete from pairing_codes where code_hash = ?').run(row.code_hash);
      const credential = newSecret('twe');
      const extension = { id: `ext-${randomBytes(4).toString('hex')}`, workspace: row.workspace };
      this.sql('insert into extensions (id, workspace, credential_hash, created_at) values (?, ?, ?, ?)').run(
        extension.id,
        extension.workspace,
        hashSecret(credential),
        new Date().toISOString(),
      );
      return { credential, extension };
    });
    return take();
  }

  /** The browser a credential belongs to, revoked ones included (the caller says which it refuses and why). */
  extensionByCredential(credential: string): (ExtensionRecord & { readonly revoked: boolean }) | undefined {
    const row = this.sql('select id, workspace, revoked_at from extensions where credential_hash = ?').get(
      hashSecret(credential),
    ) as { id: string; workspace: string; revoked_at: string | null } | undefined;
    return row && { id: row.id, workspace: row.workspace, revoked: row.revoked_at !== null };
  }

  /** Revoked by unpairing (popup or `tabward relay browsers revoke`): also when another process revoked it. */
  isExtensionRevoked(id: string): boolean {
    const row = this.sql('select revoked_at from extensions where id = ?').get(id) as
      | { revoked_at: string | null }
      | undefined;
    return !row || row.revoked_at !== null;
  }

  /**
   * Unpairs a browser: its credential gets no more tickets, its unspent tickets die, and the sites it shared
   * leave the workspace's list. False when no paired browser has that id (or it is revoked already).
   */
  revokeExtension(id: string): boolean {
    const revoke = this.db.transaction(() => {
      const row = this.sql('select workspace from extensions where id = ? and revoked_at is null').get(id) as
        | { workspace: string }
        | undefined;
      if (!row) return undefined;
      this.sql('update extensions set revoked_at = ? where id = ?').run(new Date().toISOString(), id);
      this.sql('delete from tickets where extension_id = ?').run(id);
      this.sql('delete from shared_sites where extension_id = ?').run(id);
      return row.workspace;
    });
    const workspace = revoke();
    if (workspace !== undefined) this.sitesByWorkspace.delete(workspace);
    return workspace !== undefined;
  }

  listExtensions(): BrowserListing[] {
    const rows = this.sql(
      'select e.id, e.workspace, e.created_at, e.revoked_at, (select count(*) from shared_sites s where s.extension_id = e.id) as sites from extensions e order by e.created_at',
    ).all() as {
      id: string;
      workspace: string;
      created_at: string;
      revoked_at: string | null;
      sites: number;
    }[];
    return rows.map((r) => ({
      id: r.id,
      workspace: r.workspace,
      createdAt: r.created_at,
      revoked: r.revoked_at !== null,
      sharedSites: r.sites,
    }));
  }

  issueTicket(extensionId: string, lifetimeMs: number): string {
    const ticket = newSecret('twt');
    this.sql('insert into tickets (ticket_hash, extension_id, expires_at) values (?, ?, ?)').run(
      hashSecret(ticket),
      extensionId,
      Date.now() + lifetimeMs,
    );
    this.sql('delete from tickets where expires_at < ?').run(Date.now() - 3_600_000);
    return ticket;
  }

  /** Marks the ticket used; returns why it is refused, or the extension it belongs to. */
  spendTicket(ticket: string): ExtensionRecord | 'unknown' | 'expired' | 'used' | 'revoked' {
    const spend = this.db.transaction(() => {
      const row = this.sql('select extension_id, expires_at, used from tickets where ticket_hash = ?').get(
        hashSecret(ticket),
      ) as { extension_id: string; expires_at: number; used: number } | undefined;
      if (!row) return 'unknown' as const;
      if (row.used) return 'used' as const;
      this.sql('update tickets set used = 1 where ticket_hash = ?').run(hashSecret(ticket));
      if (row.expires_at < Date.now()) return 'expired' as const;
      const extension = this.sql('select id, workspace, revoked_at from extensions where id = ?').get(
        row.extension_id,
      ) as { id: string; workspace: string; revoked_at: string | null } | undefined;
      if (!extension) return 'unknown' as const;
      if (extension.revoked_at !== null) return 'revoked' as const;
      return { id: extension.id, workspace: extension.workspace };
    });
    return spend();
  }

  /** Replaces what one paired browser shares; other browsers of the workspace keep theirs. */
  saveSites(extension: ExtensionRecord, sites: readonly SharedSiteState[]): void {
    const now = new Date().toISOString();
    const save = this.db.transaction(() => {
      this.sql('delete from shared_sites where workspace = ? and extension_id = ?').run(
        extension.workspace,
        extension.id,
      );
      const insert = this.sql(
        'insert into shared_sites (workspace, extension_id, origin, url, tools_json, updated_at) values (?, ?, ?, ?, ?, ?)',
      );
      for (const site of sites)
        insert.run(extension.workspace, extension.id, site.origin, site.url, JSON.stringify(site.tools), now);
    });
    save();
    this.sitesByWorkspace.delete(extension.workspace);
  }

  /**
   * The workspace's shared sites across its browsers; where two share a site, the latest report wins. Kept in
   * memory between reports: every call looks its tool up here. Only the relay saves sites, but another process
   * may revoke a browser (`tabward relay browsers revoke`): SQLite's data_version says when one wrote.
   */
  sites(workspace: string): { origin: string; url: string; tools: SiteTool[] }[] {
    const version = this.sql('pragma data_version').pluck().get() as number;
    if (version !== this.dataVersion) {
      this.dataVersion = version;
      this.sitesByWorkspace.clear();
    }
    const known = this.sitesByWorkspace.get(workspace);
    if (known) return known;
    const read = this.readSites(workspace);
    this.sitesByWorkspace.set(workspace, read);
    return read;
  }

  private readSites(workspace: string): { origin: string; url: string; tools: SiteTool[] }[] {
    const latest = new Map<string, { origin: string; url: string; tools: SiteTool[] }>();
    const rows = this.sql(
      'select origin, url, tools_json from shared_sites where workspace = ? order by updated_at, rowid',
    ).all(workspace) as { origin: string; url: string; tools_json: string }[];
    for (const row of rows)
      latest.set(row.origin, {
        origin: row.origin,
        url: row.url,
        tools: JSON.parse(row.tools_json) as SiteTool[],
      });
    return [...latest.values()].sort((a, b) => a.origin.localeCompare(b.origin));
  }

  allow(workspace: string, origin: string, tool: string): void {
    this.sql(
      'insert or ignore into permissions (workspace, origin, tool, created_at) values (?, ?, ?, ?)',
    ).run(workspace, origin, tool, new Date().toISOString());
  }

  isAllowed(workspace: string, origin: string, tool: string): boolean {
    return !!this.sql('select 1 from permissions where workspace = ? and origin = ? and tool = ?').get(
      workspace,
      origin,
      tool,
    );
  }

  startTask(id: string, workspace: string, agent: string, origin: string, tool: string): void {
    this.sql(
      'insert into tasks (id, workspace, agent, origin, tool, status, created_at) values (?, ?, ?, ?, ?, ?, ?)',
    ).run(id, workspace, agent, origin, tool, 'running', new Date().toISOString());
  }

  endTask(id: string, status: string): void {
    this.sql('update tasks set status = ?, ended_at = ? where id = ?').run(
      status,
      new Date().toISOString(),
      id,
    );
  }

  /** The browser the call was sent to run in: the only one whose answer for it counts, even after a restart. */
  setTaskBrowser(id: string, browser: string): void {
    this.sql('update tasks set browser = ? where id = ?').run(browser, id);
  }

  task(id: string): { status: string; tool: string; origin: string; browser: string | null } | undefined {
    return this.sql('select status, tool, origin, browser from tasks where id = ?').get(id) as
      | { status: string; tool: string; origin: string; browser: string | null }
      | undefined;
  }

  /**
   * The relay (re)starts: calls that were running when it went down may or may not have run. Their keys say so
   * (a retry is refused until the outcome is known), their tasks are marked interrupted.
   */
  markInterrupted(): void {
    this.sql("update tasks set status = 'interrupted' where status = 'running'").run();
    this.sql(
      "update call_keys set state = 'unknown', outcome_json = 'the relay stopped while it ran' where state = 'running'",
    ).run();
  }

  /**
   * Claims an agent's idempotency key for a new task; returns the record of the earlier call instead when the
   * key is taken (running, done or unknown). Keys are forgotten after a day.
   */
  claimKey(agentId: string, key: string, taskId: string, callHash: string): KeyRecord | undefined {
    const claim = this.db.transaction(() => {
      this.sql('delete from call_keys where updated_at < ?').run(Date.now() - keyLifetimeMs);
      const row = this.sql(
        'select task_id, state, outcome_json, call_hash from call_keys where agent_id = ? and key = ?',
      ).get(agentId, key) as KeyRow | undefined;
      if (row) return keyRecordOf(row);
      this.sql(
        "insert into call_keys (agent_id, key, task_id, state, outcome_json, updated_at, call_hash) values (?, ?, ?, 'running', '', ?, ?)",
      ).run(agentId, key, taskId, Date.now(), callHash);
      return undefined;
    });
    return claim();
  }

  /** What became of a keyed task: `free` forgets the key (nothing ran, or the page said it failed). */
  settleKey(taskId: string, state: 'done' | 'unknown' | 'free', detail: string): void {
    if (state === 'free') {
      this.sql('delete from call_keys where task_id = ?').run(taskId);
      return;
    }
    this.sql('update call_keys set state = ?, outcome_json = ?, updated_at = ? where task_id = ?').run(
      state,
      detail,
      Date.now(),
      taskId,
    );
  }

  /** The key record of a task, if the agent gave one. */
  keyOfTask(taskId: string): KeyRecord | undefined {
    const row = this.sql(
      'select task_id, state, outcome_json, call_hash from call_keys where task_id = ?',
    ).get(taskId) as KeyRow | undefined;
    return row ? keyRecordOf(row) : undefined;
  }

  addActivity(workspace: string, entries: readonly ActivityEntry[]): void {
    const insert = this.sql('insert into activity (workspace, entry_json) values (?, ?)');
    this.db.transaction(() => {
      for (const entry of entries) insert.run(workspace, JSON.stringify(entry));
    })();
  }

  recentActivity(workspace: string, limit: number): ActivityEntry[] {
    return this.sql('select entry_json from activity where workspace = ? order by seq desc limit ?')
      .all(workspace, limit)
      .map((row) => JSON.parse((row as { entry_json: string }).entry_json) as ActivityEntry)
      .reverse();
  }
}
