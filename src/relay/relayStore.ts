// The relay's state in one SQLite file (better-sqlite3): workspaces, agent tokens, paired extensions, pairing
// codes, tickets, shared sites with their last known tools, standing permissions, tasks, the calls' idempotency
// keys and the activity feed.
// Secrets (tokens, credentials, tickets) are stored as SHA-256 hashes only; pairing codes, short enough for a
// human to type, as HMACs under a random per-database salt. The file and its -wal/-shm are its owner's only.

import { randomBytes, timingSafeEqual } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { ActivityEntry, SharedSiteState, SiteTool } from '../protocol/siteTools.ts';
import { CallKeyTable } from './storeCallKeys.ts';
import { openStore } from './storeFile.ts';
import type { AgentRecord, BrowserListing, ExtensionRecord, KeyRecord } from './storeRecords.ts';
import { hashPairingCode, hashSecret, newPairingCode, newSecret } from './storeSecrets.ts';

export type { AgentRecord, BrowserListing, ExtensionRecord, KeyRecord } from './storeRecords.ts';
export { canonicalPairingCode, hashPairingCode, hashSecret, newPairingCode } from './storeSecrets.ts';

export class RelayStore {
  private readonly db: Database.Database;
  private readonly pairingSalt: Buffer;
  /** The calls' idempotency keys (relay/storeCallKeys.ts). */
  private readonly keys: CallKeyTable;
  /** Prepared once: preparing a statement costs more than running it, and every call runs several. */
  private readonly statements = new Map<string, Database.Statement>();
  private readonly sitesByWorkspace = new Map<string, { origin: string; url: string; tools: SiteTool[] }[]>();
  /** SQLite's count of commits by other connections when sitesByWorkspace was last trusted. */
  private dataVersion = -1;

  constructor(file: string) {
    this.db = openStore(file);
    this.keys = new CallKeyTable(this.db, (text) => this.sql(text));
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
    return take.immediate();
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
    // Every transaction here is immediate: it takes the write lock first, waiting for another process (the relay,
    // the CLI) that holds it. A deferred one that reads first fails at once with SQLITE_BUSY when the other process
    // wrote meanwhile (its snapshot is stale; SQLite does not wait for that).
    const workspace = revoke.immediate();
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
    return spend.immediate();
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
    save.immediate();
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
    return this.keys.claim(agentId, key, taskId, callHash);
  }

  /** What became of a keyed task: `free` forgets the key (nothing ran, or the page said it failed). */
  settleKey(taskId: string, state: 'done' | 'unknown' | 'free', detail: string): void {
    this.keys.settle(taskId, state, detail);
  }

  /** The key record of a task, if the agent gave one. */
  keyOfTask(taskId: string): KeyRecord | undefined {
    return this.keys.ofTask(taskId);
  }

  addActivity(workspace: string, entries: readonly ActivityEntry[]): void {
    const insert = this.sql('insert into activity (workspace, entry_json) values (?, ?)');
    this.db
      .transaction(() => {
        for (const entry of entries) insert.run(workspace, JSON.stringify(entry));
      })
      .immediate();
  }

  recentActivity(workspace: string, limit: number): ActivityEntry[] {
    return this.sql('select entry_json from activity where workspace = ? order by seq desc limit ?')
      .all(workspace, limit)
      .map((row) => JSON.parse((row as { entry_json: string }).entry_json) as ActivityEntry)
      .reverse();
  }
}
