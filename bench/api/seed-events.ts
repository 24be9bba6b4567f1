import { payloadHash } from '../../libs/dedup/payload-hash.js';
import { newId } from '../../libs/ids/ids.js';
import type { SqlClient } from '../../libs/store/sql-client.js';

/** How the seeded events spread: statuses and signature results in realistic shares. */
const STATUSES = [...Array(85).fill('delivered'), ...Array(8).fill('failed'), ...Array(4).fill('partial'), ...Array(3).fill('pending')] as string[];
export const CUSTOMERS = 20_000;
const ROWS_PER_STATEMENT = 500;
const ROWS_PER_TRANSACTION = 20_000;

const COLUMNS = [
  'id', 'org_id', 'source_id', 'status', 'headers', 'content_type', 'payload', 'payload_sealed', 'payload_text', 'payload_size', 'payload_hash',
  'signature_valid', 'client_ip', 'received_at', 'validated_at', 'queued_at', 'created_at', 'deliveries_count', 'deliveries_succeeded', 'deliveries_failed',
];

export const customerEmail = (n: number) => `customer-${String(n).padStart(5, '0')}@example.com`;

/** A JSON webhook of about 400 bytes; customer n appears in one event of every `CUSTOMERS`. */
function payload(i: number): string {
  return JSON.stringify({
    type: 'order.created',
    customer: { email: customerEmail(i % CUSTOMERS), name: `Customer ${i % CUSTOMERS}` },
    order: { id: `ord-${i}`, total: (i % 10_000) / 100, currency: 'EUR', items: [{ sku: `sku-${i % 997}`, qty: 1 + (i % 3) }] },
    note: 'Thanks for your order. It ships in two to three working days from our warehouse.',
  });
}

function row(i: number, orgId: string, sourceIds: string[], startMs: number, stepMs: number, sql: SqlClient): unknown[] {
  const text = payload(i);
  const body = Buffer.from(text);
  const at = startMs + i * stepMs;
  // Spread across sources independently of the source (i % sources), so every source sees every status.
  const round = Math.floor(i / sourceIds.length);
  const status = STATUSES[round % STATUSES.length]!;
  const succeeded = status === 'delivered' ? 1 : status === 'partial' ? 1 : 0;
  return [
    newId('evt'), orgId, sourceIds[i % sourceIds.length], status, '{"content-type":"application/json","user-agent":"Shop-Hookshot/1.0"}', 'application/json',
    body, sql.bool(false), text, body.length, payloadHash(body), sql.bool(round % 50 !== 7), '203.0.113.7', at, at + 1, at + 2, at + 3,
    status === 'partial' ? 2 : 1, succeeded, status === 'failed' || status === 'partial' ? 1 : 0,
  ];
}

/**
 * Inserts `count` events of one organization, oldest first, `stepMs` apart, with multi-row INSERTs in
 * large transactions (not through the API). Calls `progress` after each transaction.
 */
export async function seedEvents(
  sql: SqlClient,
  options: { orgId: string; sourceIds: string[]; count: number; startMs: number; stepMs: number; progress?: (done: number) => void },
): Promise<void> {
  const statement = (rows: number) =>
    `INSERT INTO events (${COLUMNS.join(', ')}) VALUES ${Array.from({ length: rows }, () => `(${COLUMNS.map(() => '?').join(', ')})`).join(', ')}`;
  for (let done = 0; done < options.count; ) {
    const end = Math.min(done + ROWS_PER_TRANSACTION, options.count);
    await sql.transaction(async (tx) => {
      for (let i = done; i < end; i += ROWS_PER_STATEMENT) {
        const rows = Math.min(ROWS_PER_STATEMENT, end - i);
        const params = Array.from({ length: rows }, (_, k) => row(i + k, options.orgId, options.sourceIds, options.startMs, options.stepMs, tx)).flat();
        await tx.run(statement(rows), params);
      }
    });
    done = end;
    options.progress?.(done);
  }
}
