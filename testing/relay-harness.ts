import { setTimeout as sleep } from 'node:timers/promises';
import type { Context } from 'mocha';
import { loadConfig } from '../libs/config/config.js';
import { createLogger } from '../libs/logging/logger.js';
import { apiClient, type ApiCall, type ApiResponse } from './api-client.js';
import type { BackendTarget } from '../libs/testing/backend-targets.js';
import { startHttpSink, type HttpSink } from '../libs/testing/http-sink.js';
import { TEST_RELAY_ENV } from '../libs/testing/test-relay-env.js';
import { waitFor } from '../libs/testing/wait-for.js';
import { startRelay, type RelayOptions, type RunningRelay } from '../apps/relay/relay.js';

export const TEST_API_KEY = 'relay-test-key-0123456789';
export const TEST_ENCRYPTION_KEY = Buffer.alloc(32, 9).toString('base64');

/** A whole relay (all roles) on one pair of backends, with an API client for organization `default`. */
export interface RelayHarness {
  relay: RunningRelay;
  api: ApiCall;
  /** Posts a webhook (no API key) as a provider does, again after a 503 with Retry-After (`sendAsProvider`). */
  send(path: string, rawBody: string, headers?: Record<string, string>): Promise<ApiResponse>;
  env: Record<string, string>;
  /** Closes the relay and starts another on the same backends (`relay` and `api` then reach the new one). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startRelayHarness(
  mocha: Context,
  target: BackendTarget,
  env: Record<string, string> = {},
  /** `logger` for a suite that reads the relay's log lines; silent (TEST_LOG_LEVEL) otherwise. */
  options: RelayOptions = {},
): Promise<RelayHarness> {
  const location = await target.prepare(mocha);
  const fullEnv = {
    ...TEST_RELAY_ENV,
    ...location.env,
    PORT: '0',
    HOST: '127.0.0.1',
    RELAY_API_KEY: TEST_API_KEY,
    RELAY_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    RELAY_RETRY_JITTER: '0',
    RELAY_DEFAULT_PLAN: 'business',
    // One thread unless a suite asks for more: the pipeline threads have suites of their own.
    RELAY_THREADS: '1',
    // The suites call the API as fast as they can set things up; the per-key limit has a suite of its own.
    RELAY_API_REQUESTS_PER_SECOND: '1000000',
    ...env,
  };
  const logger = options.logger ?? createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const start = () => startRelay(loadConfig(fullEnv), { ...options, logger });
  const relay = await start();
  const harness: RelayHarness = {
    relay,
    api: apiClient(relay.url, TEST_API_KEY),
    send: (path, rawBody, headers) => sendAsProvider(harness.api, path, rawBody, headers),
    env: fullEnv,
    async restart() {
      await harness.relay.close();
      harness.relay = await start();
      harness.api = apiClient(harness.relay.url, TEST_API_KEY);
    },
    async stop() {
      await harness.relay.close();
      await location.cleanup();
    },
  };
  return harness;
}

/** How many times a provider posts one webhook that is answered 503 with Retry-After. */
const PROVIDER_TRIES = 3;

/**
 * Posts a webhook as a provider does: a 503 that names a Retry-After (the store or broker could not
 * promise durability within ingest's budget, as a loaded CI machine's three JVM brokers sometimes cannot)
 * is posted again after that wait. A suite about what ingest answers calls `api` instead.
 */
async function sendAsProvider(api: ApiCall, path: string, rawBody: string, headers: Record<string, string> = { 'content-type': 'application/json' }): Promise<ApiResponse> {
  for (let tries = 1; ; tries += 1) {
    const response = await api('POST', path, { key: null, rawBody, headers });
    const retryAfterSeconds = Number(response.headers['retry-after']);
    if (response.status !== 503 || !Number.isFinite(retryAfterSeconds) || tries === PROVIDER_TRIES) return response;
    await sleep(retryAfterSeconds * 1000);
  }
}

/**
 * For a suite on one pair of backends: starts a relay harness before its tests, and after them closes
 * every sink made with `sink` and stops the relay.
 */
export function useRelayHarness(target: BackendTarget, options: Omit<RelayOptions, 'logger'> = {}, env: () => Record<string, string> = () => ({})) {
  let started: RelayHarness | undefined;
  const sinks: HttpSink[] = [];
  before(async function () {
    this.timeout(60_000);
    // Read when the relay starts: a suite's earlier hook may start what the environment names (an OTLP receiver).
    started = await startRelayHarness(this, target, env(), options);
  });
  after(async function () {
    this.timeout(30_000);
    await Promise.all(sinks.map((sink) => sink.close()));
    await started?.stop();
  });
  return {
    get harness(): RelayHarness {
      if (!started) throw new Error("The relay harness starts in the suite's before hook");
      return started;
    },
    async sink(behaviour: Parameters<typeof startHttpSink>[0]): Promise<HttpSink> {
      const sink = await startHttpSink(behaviour);
      sinks.push(sink);
      return sink;
    },
  };
}
