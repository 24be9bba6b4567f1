import { expect } from 'chai';
import type { Role } from '../libs/config/config.js';
import { apiClient } from './api-client.js';
import { openStore, type Store } from '../libs/store/store.js';
import type { BackendTarget } from '../libs/testing/backend-targets.js';
import { startHttpSink, type HttpSink } from '../libs/testing/http-sink.js';
import { printOutputOnFailure, startRelayProcess, type RelayProcess, type RelayProcessOptions } from '../libs/testing/relay-child-process.js';

/** Shared by the process-level suites: set up a source -> destination route and watch deliveries settle. */

export const API_KEY = 'rk_process-suite-key-0123456789';
export const ENCRYPTION_KEY = Buffer.alloc(32, 11).toString('base64');

export interface Pipeline {
  sourceId: string;
  destinationId: string;
  /** `/ingest/<org>/<source>`, to append to any gateway's URL. */
  ingestPath: string;
}

/** Creates a source, a destination at `destinationUrl` (with `settings`) and the route between them, through the API. */
export async function configurePipeline(apiUrl: string, destinationUrl: string, settings: Record<string, unknown> = {}): Promise<Pipeline> {
  const api = apiClient(apiUrl, API_KEY);
  const source = await api('POST', '/api/sources', { body: { name: 'Orders', slug: 'orders', provider: 'generic' } });
  expect(source.status, source.text).to.equal(201);
  const destination = await api('POST', '/api/destinations', { body: { name: 'Sink', url: destinationUrl, ...settings } });
  expect(destination.status, destination.text).to.equal(201);
  const route = await api('POST', '/api/routes', { body: { sourceId: source.body.id, destinationId: destination.body.id } });
  expect(route.status, route.text).to.equal(201);
  return { sourceId: source.body.id, destinationId: destination.body.id, ingestPath: new URL(source.body.webhookUrl).pathname };
}

/** Posts one JSON webhook; the event id when the gateway acknowledged it, undefined otherwise. */
export async function postWebhook(gatewayUrl: string, pipeline: Pipeline, body: unknown): Promise<string | undefined> {
  try {
    const response = await fetch(`${gatewayUrl}${pipeline.ingestPath}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const answer = (await response.json()) as { eventId?: string };
    return response.status === 200 || response.status === 202 ? answer.eventId : undefined;
  } catch {
    // Refused or reset while the process stops: not acknowledged, so nothing is owed.
    return undefined;
  }
}

/** The store the processes share, opened by the test to read what the recorder wrote. */
export function openSharedStore(env: Record<string, string>): Promise<Store> {
  return openStore({ dataDir: env.RELAY_DATA_DIR!, databaseUrl: env.DATABASE_URL });
}

/** Delivery statuses of a destination, as counts. */
export async function deliveryStatusCounts(store: Store, destinationId: string): Promise<Record<string, number>> {
  const rows = await store.sql.all<{ status: string; count: number | string }>(
    'SELECT status, COUNT(*) AS count FROM deliveries WHERE destination_id = ? GROUP BY status',
    [destinationId],
  );
  return Object.fromEntries(rows.map((row) => [row.status, Number(row.count)]));
}

/** What a suite of relay processes gets from `useRelayProcesses`, once its `before` ran. */
export interface RelayProcesses {
  sink: HttpSink;
  /** The store the processes share, opened by the test once `setup` has started them (not in `setup`). */
  store: Store;
  processes: RelayProcess[];
  /** Starts a process of `role` on the suite's backend; it is killed after the suite. */
  start(role: Role, options?: RelayProcessOptions): Promise<RelayProcess>;
}

/**
 * The before/after of a suite running relay processes on `target`: its backend, an HTTP sink, the shared
 * store; `setup` starts the processes (the first one it starts applies the migrations) and prepares what
 * the tests share. Processes' output is printed when a test fails.
 */
export function useRelayProcesses(target: BackendTarget, settings: Record<string, string>, setup: (suite: RelayProcesses) => Promise<void>): RelayProcesses {
  const suite = { processes: [] as RelayProcess[] } as RelayProcesses;
  let cleanup: (() => Promise<void>) | undefined;
  before(async function () {
    const location = await target.prepare(this);
    cleanup = location.cleanup;
    const env = { ...location.env, RELAY_API_KEY: API_KEY, RELAY_ENCRYPTION_KEY: ENCRYPTION_KEY, ...settings };
    suite.sink = await startHttpSink();
    suite.start = async (role, options) => {
      const member = await startRelayProcess(role, env, options);
      suite.processes.push(member);
      return member;
    };
    await setup(suite);
    suite.store = await openSharedStore(env);
  });
  printOutputOnFailure(() => suite.processes, 3000);
  after(async function () {
    await Promise.all(suite.processes.map((member) => member.kill()));
    await suite.store?.close();
    await suite.sink?.close();
    await cleanup?.();
  });
  return suite;
}
