// Every worker's audit records in one place: each record a worker writes to its own file is also added to the Redis
// stream `tabward:audit` (capped at about 100,000 records), which `tabward audit --redis` reads. The local file stays
// the record of truth for its machine: a stream entry that cannot be written is said on stderr, never waited for.

import type { Redis } from 'ioredis';
import type { AuditEntry, AuditSink, AuditStart } from '../core/audit.ts';
import { redisConnection } from './runQueue.ts';

export const auditStreamKey = 'tabward:audit';
const maxRecords = 100_000;

export class AuditStream implements AuditSink {
  private failing = false;

  constructor(
    private readonly connection: Redis,
    private readonly log: (line: string) => void,
  ) {}

  static open(url: string, log: (line: string) => void): AuditStream {
    return new AuditStream(redisConnection(url, true), log);
  }

  record(entry: AuditEntry | AuditStart): void {
    this.connection
      .xadd(auditStreamKey, 'MAXLEN', '~', String(maxRecords), '*', 'record', JSON.stringify(entry))
      .then(
        () => {
          this.failing = false;
        },
        (error: unknown) => {
          if (this.failing) return;
          this.failing = true;
          this.log(
            `tabward: an audit record did not reach the Redis stream (${String(error)}); it is in the local file.`,
          );
        },
      );
  }

  close(): void {
    this.connection.disconnect();
  }
}

/** The stream's records, oldest first (at most `limit`, the newest ones). */
export async function readAuditStream(url: string, limit: number): Promise<(AuditEntry | AuditStart)[]> {
  const connection = redisConnection(url);
  try {
    const entries = (await connection.xrevrange(auditStreamKey, '+', '-', 'COUNT', String(limit))) as [
      string,
      string[],
    ][];
    return entries
      .reverse()
      .map(
        ([, fields]) => JSON.parse(fields[fields.indexOf('record') + 1] ?? '{}') as AuditEntry | AuditStart,
      );
  } finally {
    connection.disconnect();
  }
}
