import { expect } from 'chai';
import type { Context } from 'mocha';
import { loadConfig } from '../libs/config/config.js';
import { createLogger } from '../libs/logging/logger.js';
import { createSecretBox, type SecretBox } from '../libs/secrets/secret-box.js';
import { apiClient, type ApiCall } from './api-client.js';
import type { StoreTarget } from '../libs/testing/store-targets.js';
import { TEST_RELAY_ENV } from '../libs/testing/test-relay-env.js';
import { startRelay, type RelayOptions, type RunningRelay } from '../apps/relay/relay.js';

/** A running relay on one store backend with two organizations, A and B, each with its own key. */
export interface ApiHarness {
  relay: RunningRelay;
  /** The relay's data directory (its SQLite files when no `DATABASE_URL`). */
  dataDir: string;
  url: string;
  /** Calls as organization A (default key) or with `{key}` as anyone else. */
  api: ApiCall;
  keyA: string;
  keyB: string;
  /** Calls as organization B. */
  apiB: ApiCall;
  /** A table row exactly as stored, read with SQL past every repository (encryption-at-rest checks). */
  rawRow(table: 'sources' | 'destinations' | 'routes', id: string): Promise<Record<string, unknown> | undefined>;
  /** Decrypts a sealed column with the harness's encryption key (what is really stored behind a mask). */
  unseal(sealed: string): string;
  /** The relay's secret box (same key), for tests that store what the relay would store. */
  secrets: SecretBox;
  /** Stops and starts the relay over the same data (restart persistence). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const ENCRYPTION_KEY = Buffer.alloc(32, 7);

/** A stack frame as Node prints it; no response body may ever contain one. */
const STACK_FRAME = '    at ';

/** Every response of every API test is checked: never a 500, never a stack trace. */
function guarded(call: ApiCall): ApiCall {
  return async (method, path, options) => {
    const response = await call(method, path, options);
    expect(response.status, `${method} ${path} answered ${response.status}: ${response.text}`).to.be.below(500);
    expect(response.text, `${method} ${path} leaked a stack trace`).not.to.include(STACK_FRAME);
    return response;
  };
}

/** POSTs `body` to `path`, expects 201 Created and returns the created resource. */
export async function created(api: ApiCall, path: string, body: unknown) {
  const response = await api('POST', path, { body });
  expect(response.status, response.text).to.equal(201);
  return response.body;
}

/** As `created`, returning only the new resource's id. */
export async function createdId(api: ApiCall, path: string, body: unknown): Promise<string> {
  return (await created(api, path, body)).id;
}

export interface ApiHarnessOptions extends Omit<RelayOptions, 'logger'> {
  /** `api` (default): the api role alone, for suites that only call the API; `all` for those that ingest or deliver too. */
  role?: 'api' | 'all';
  /**
   * RELAY_API_REQUESTS_PER_SECOND. Unset, the harness lifts the per-key limit to the most: the suites
   * create resources as fast as they can and check other things; the rate-limit suite sets it.
   */
  apiRequestsPerSecond?: number;
  /** Settings over the harness's own; a variable set to undefined takes the relay's default. */
  env?: Record<string, string | undefined>;
}

export async function startApiHarness(mocha: Context, target: StoreTarget, options: ApiHarnessOptions = {}): Promise<ApiHarness> {
  const { role = 'api', apiRequestsPerSecond = 1_000_000, env = {}, ...relayOptions } = options;
  const location = await target.prepare(mocha);
  const config = loadConfig({
    ...TEST_RELAY_ENV,
    PORT: '0',
    HOST: '127.0.0.1',
    RELAY_DATA_DIR: location.dataDir,
    DATABASE_URL: location.databaseUrl,
    RELAY_API_KEY: 'test-key-org-a-0123456789',
    RELAY_ORG: 'org-a',
    RELAY_ENCRYPTION_KEY: ENCRYPTION_KEY.toString('base64'),
    RELAY_PUBLIC_URL: 'https://relay.example.test',
    RELAY_ROLE: role,
    // The API suites check the API, not the pipeline threads (those have suites of their own).
    RELAY_THREADS: '1',
    RELAY_API_REQUESTS_PER_SECOND: String(apiRequestsPerSecond),
    ...env,
  });
  const logger = createLogger({ level: 'silent' });
  let relay = await startRelay(config, { ...relayOptions, logger });
  const orgB = await relay.store.organizations.create('org-b', 'pro');
  const { key: keyB } = await relay.store.apiKeys.create(orgB.id, 'test', 'admin');
  const harness: ApiHarness = {
    relay,
    dataDir: location.dataDir,
    url: relay.url,
    api: guarded(apiClient(relay.url, config.apiKey!)),
    keyA: config.apiKey!,
    keyB,
    apiB: guarded(apiClient(relay.url, keyB)),
    async rawRow(table, id) {
      const placeholder = relay.store.kind === 'postgres' ? '$1' : '?';
      const rows: Record<string, unknown>[] = await relay.store.dataSource.query(`SELECT * FROM ${table} WHERE id = ${placeholder}`, [id]);
      return rows[0];
    },
    unseal: (sealed) => createSecretBox(ENCRYPTION_KEY).open(sealed),
    secrets: createSecretBox(ENCRYPTION_KEY),
    async restart() {
      await relay.close();
      relay = await startRelay({ ...config, port: relay.port }, { ...relayOptions, logger });
      harness.relay = relay;
    },
    async stop() {
      await relay.close();
      await location.cleanup();
    },
  };
  return harness;
}
