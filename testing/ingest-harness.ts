import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import type { Context } from 'mocha';
import type { Plan } from '../libs/config/config.js';
import { apiClient, type ApiCall, type ApiResponse, type RequestOptions } from './api-client.js';
import type { StoreTarget } from '../libs/testing/store-targets.js';
import { created, startApiHarness, type ApiHarness, type ApiHarnessOptions } from './api-harness.js';
import { INGEST_TOPIC, ROUTER_GROUP } from '../libs/pipeline/topology.js';
import { DEDUP_JOURNAL_FILE } from '../libs/store/dedup-journal.js';
import { openSqlClient } from '../libs/store/sql-client.js';
import { isTrue, waitFor } from '../libs/testing/wait-for.js';

/** An event row as the router stored it, in the same shape on SQLite and PostgreSQL. */
export interface StoredEvent {
  id: string;
  sourceId: string;
  signatureValid: boolean;
  payload: Buffer;
  contentType: string | null;
  payloadHash: string;
  clientIp: string | null;
}

export interface IngestHarness {
  api: ApiHarness;
  /** A public ingest call: no API key, the body sent as given. */
  ingest(path: string, options?: RequestOptions & { method?: string }): Promise<ApiResponse>;
  /** Creates a source through the API (as organization A unless `as` is another org's client). */
  createSource(body: Record<string, unknown>, as?: ApiCall): Promise<{ id: string; slug: string }>;
  /**
   * Creates a source under a slug no other source of the harness has, with its ingest path; `org` is the slug
   * of the organization `as` calls for.
   */
  createUniqueSource(settings?: Record<string, unknown>, as?: ApiCall, org?: string): Promise<{ id: string; slug: string; path: string }>;
  /** A new organization on `plan` with its own API client. */
  createOrganization(slug: string, plan: Plan): Promise<ApiCall>;
  /** How many messages the gateway has published to `relay.ingest` so far (only accepted requests publish). */
  publishedCount(): Promise<number>;
  /** Waits until the router has stored every published event. */
  settle(): Promise<void>;
  /** The stored events of a source, oldest first, once every published event is stored. */
  events(sourceId: string): Promise<StoredEvent[]>;
  /** Pretends `ms` passed for the dedup ledger of a source: every key expires that much sooner. */
  ageDedupKeys(sourceId: string, ms: number): Promise<void>;
  stop(): Promise<void>;
}

const SETTLE_TIMEOUT_MS = 10_000;


interface EventRow {
  id: string;
  source_id: string;
  signature_valid: boolean | number;
  payload: Buffer | Uint8Array;
  content_type: string | null;
  payload_hash: string;
  client_ip: string | null;
}

export async function startIngestHarness(mocha: Context, target: StoreTarget, relayOptions: Omit<ApiHarnessOptions, 'role'> = {}): Promise<IngestHarness> {
  const api = await startApiHarness(mocha, target, { ...relayOptions, role: 'all' });
  const publicCall = apiClient(api.url, null);
  const lag = () => api.relay.broker.admin().lag(ROUTER_GROUP, [INGEST_TOPIC]);
  let sources = 0;

  const harness: IngestHarness = {
    api,
    ingest: (path, options = {}) => publicCall(options.method ?? 'POST', path, options),
    createSource: (body, as = api.api) => created(as, '/api/sources', body),
    async createUniqueSource(settings = {}, as, org = 'org-a') {
      const slug = `source-${(sources += 1)}`;
      const { id } = await harness.createSource({ name: 'Ingest test', ...settings, slug }, as);
      return { id, slug, path: `/ingest/${org}/${slug}` };
    },
    async createOrganization(slug, plan) {
      const org = await api.relay.store.organizations.create(slug, plan);
      const { key } = await api.relay.store.apiKeys.create(org.id, 'test', 'admin');
      return apiClient(api.url, key);
    },
    async publishedCount() {
      return (await lag()).reduce((sum, partition) => sum + Number(partition.end), 0);
    },
    async settle() {
      await waitFor('the router to store every published event', async () => (await lag()).every((partition) => partition.lag === 0), isTrue, SETTLE_TIMEOUT_MS, 10);
    },
    async events(sourceId) {
      await harness.settle();
      const rows = await api.relay.store.sql.all<EventRow>(
        'SELECT id, source_id, signature_valid, payload, content_type, payload_hash, client_ip FROM events WHERE source_id = ? ORDER BY received_at, id',
        [sourceId],
      );
      return rows.map((row) => ({
        id: row.id,
        sourceId: row.source_id,
        signatureValid: Boolean(row.signature_valid),
        payload: Buffer.from(row.payload),
        contentType: row.content_type,
        payloadHash: row.payload_hash,
        clientIp: row.client_ip,
      }));
    },
    async ageDedupKeys(sourceId, ms) {
      const age = 'SET expires_at = expires_at - ? WHERE source_id = ?';
      // Whichever ledger the relay runs: the store's keyed table when shared, else the journal's own file.
      await api.relay.store.sql.run(`UPDATE dedup_keys ${age}`, [ms, sourceId]);
      if (!fs.existsSync(path.join(api.dataDir, DEDUP_JOURNAL_FILE))) return;
      const journal = openSqlClient({ dataDir: api.dataDir, sqliteFile: DEDUP_JOURNAL_FILE });
      try {
        await journal.run(`UPDATE dedup_journal ${age}`, [ms, sourceId]);
      } finally {
        await journal.close();
      }
    },
    stop: () => api.stop(),
  };
  return harness;
}

/** Expects a refusal in the `{error, message, code}` envelope. */
export function expectRefused(response: ApiResponse, status: number, code: string): void {
  expect(response.status, response.text).to.equal(status);
  expect(response.body).to.include({ code });
  expect(response.body.error).to.be.a('string').and.not.equal('');
  expect(response.body.message).to.be.a('string').and.not.equal('');
}

/**
 * Runs `request` and checks that it published nothing: a refused webhook must never become an event.
 * Returns the response for further checks.
 */
export async function expectNothingPublished(harness: IngestHarness, request: () => Promise<ApiResponse>): Promise<ApiResponse> {
  const before = await harness.publishedCount();
  const response = await request();
  expect(await harness.publishedCount(), `published by: ${response.status} ${response.text}`).to.equal(before);
  return response;
}
