/**
 * One server under load for bench-ingest.ts, in a process of its own so that the load generator does
 * not share its CPU: `bare` and `forward` (see below), `shell` and `verify` (see below), `all` or `gateway` (the
 * embedded relay with a codehost source, see below). Reports `{url, path, secret}` over IPC; on `stop`
 * closes and reports what it stored.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Router, { type RouterContext } from '@koa/router';
import { Agent, request as undiciRequest } from 'undici';
import { InvalidSignatureError } from '../../apps/gateway/ingest-errors.js';
import { readRawBody } from '../../apps/gateway/raw-body.js';
import { startRelay } from '../../apps/relay/relay.js';
import { loadConfig } from '../../libs/config/config.js';
import { payloadHash } from '../../libs/dedup/payload-hash.js';
import { createHttpApp } from '../../libs/http/http-app.js';
import { startHttpServer } from '../../libs/http/http-server.js';
import { newId } from '../../libs/ids/ids.js';
import { createLogger } from '../../libs/logging/logger.js';
import { encodeIngestMessage } from '../../libs/pipeline/ingest-message.js';
import { verifySignature } from '../../libs/signatures/verify-signature.js';
import type { VerificationConfig } from '../../libs/signatures/verification-config.js';
import { apiClient } from '../../testing/api-client.js';
import { INGEST_TOPIC, ROUTER_GROUP } from '../../libs/pipeline/topology.js';
import { TEST_RELAY_ENV } from '../../libs/testing/test-relay-env.js';

export interface TargetReady {
  url: string;
  path: string;
  secret: string;
}

export interface TargetReport {
  /** CPU time (user + system) this process spent per request answered, in microseconds. */
  cpuMicrosPerRequest: number;
  /** Events the broker acknowledged (relay targets). */
  acknowledged?: number;
  /** Events the router stored in the `events` table (`all` only). */
  storedEvents?: number;
}

const API_KEY = 'bench-key-0123456789abcdef';
const SECRET = 'bench-codehost-secret';
/** The bench source's verification: the relay's source is created with it, and `verify` checks with it. */
const VERIFICATION: VerificationConfig = { type: 'codehost', secret: SECRET };

/** Where every target takes the load, and the secret autocannon signs with. */
const readyAt = (url: string): TargetReady => ({ url, path: '/ingest/bench/codehost', secret: SECRET });

function cpuMicros(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return used.user + used.system;
}

/**
 * `bare`: node:http that reads the body and answers 200. `forward` (given the sink's URL): bare, and each
 * body then sent on to the sink with undici (64 connections, the deliverer's default per destination):
 * one request in and one out per event, nothing stored. What the generator, this and the sink leave of
 * the machine is what any relay has for its own work.
 */
async function startBare(forwardTo?: string): Promise<{ ready: TargetReady; stop(): Promise<TargetReport> }> {
  const answer = Buffer.from('{"status":"received"}');
  const dispatcher = forwardTo === undefined ? undefined : new Agent({ connections: 64, keepAliveTimeout: 60_000 });
  let answered = 0;
  const cpuAtStart = process.cpuUsage();
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      // Read in full, as the gateway does.
      const body = Buffer.concat(chunks);
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length });
      response.end(answer);
      answered += 1;
      if (dispatcher) void forward(dispatcher, forwardTo!, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    ready: readyAt(`http://127.0.0.1:${port}`),
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await dispatcher?.close();
      return { cpuMicrosPerRequest: cpuMicros(cpuAtStart) / answered };
    },
  };
}

/** Sends one body on; a failure is counted by the sink's total falling short, as the bench checks. */
async function forward(dispatcher: Agent, url: string, body: Buffer): Promise<void> {
  try {
    const response = await undiciRequest(url, { method: 'POST', dispatcher, headers: { 'content-type': 'application/json' }, body });
    await response.body.dump();
  } catch {
    // The bench sees it as not delivered.
  }
}

type ShellRoute = (ctx: RouterContext) => Promise<void>;

/** The relay's HTTP shell (same Koa app, middleware and server) with one ingest route and nothing behind it. */
async function startShell(route: ShellRoute): Promise<{ ready: TargetReady; stop(): Promise<TargetReport> }> {
  let answered = 0;
  const router = new Router();
  router.post('/ingest/:org/:source', async (ctx) => {
    await route(ctx);
    answered += 1;
  });
  const server = await startHttpServer(createHttpApp([router], createLogger({ level: 'silent' })), { port: 0, host: '127.0.0.1' });
  const cpuAtStart = process.cpuUsage();
  return {
    ready: readyAt(server.url),
    async stop() {
      await server.close();
      return { cpuMicrosPerRequest: cpuMicros(cpuAtStart) / answered };
    },
  };
}

/**
 * `shell`: a route that reads the body as the gateway does and answers 200. The floor under the
 * gateway's figures: what Koa and the shared middleware cost before any ingest work.
 */
const shellRoute: ShellRoute = async (ctx) => {
  await readRawBody(ctx.req, 1024 * 1024);
  ctx.body = { eventId: 'evt_01jbench0000000000000000000', status: 'received' };
};

/**
 * `verify`: the shell plus the per-request work ingest does whatever keeps the event: the signature
 * checked, an event id drawn, the payload hashed and the `relay.ingest` message encoded; then nothing
 * is stored, deduplicated or published. No gateway that keeps its events can beat it: the ceiling
 * that the CPU work the issue requires puts on one event loop, whatever the storage design.
 */
const verifyRoute: ShellRoute = async (ctx) => {
  const receivedAt = Date.now();
  const body = await readRawBody(ctx.req, 1024 * 1024);
  const headers = ctx.req.headers as Record<string, string | string[]>;
  const signature = verifySignature({ config: VERIFICATION, rawBody: body, headers, publicUrl: ctx.href, nowMs: Date.now() });
  if (!signature.valid) throw new InvalidSignatureError(signature.reason ?? 'invalid');
  const eventId = newId('evt');
  const now = Date.now();
  encodeIngestMessage(
    {
      eventId,
      orgId: 'org_bench',
      sourceId: 'src_bench',
      headers,
      contentType: ctx.get('content-type') || null,
      clientIp: ctx.req.socket.remoteAddress ?? null,
      payloadHash: payloadHash(body),
      payloadSize: body.length,
      signatureValid: true,
      receivedAt,
      validatedAt: now,
      queuedAt: now,
    },
    body,
  );
  ctx.body = { eventId, status: 'received' };
};

/**
 * `all`: the embedded default, every role in one process (the router stores each event as it comes).
 * `gateway`: the gateway role alone over the same embedded log and store, the router not running,
 * so the figures are the gateway's own; the source is created first by a short `all` start.
 */
async function startEmbeddedRelay(role: 'all' | 'gateway'): Promise<{ ready: TargetReady; stop(): Promise<TargetReport> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-bench-'));
  const env = {
    ...TEST_RELAY_ENV,
    PORT: '0',
    HOST: '127.0.0.1',
    RELAY_DATA_DIR: dataDir,
    RELAY_API_KEY: API_KEY,
    RELAY_ORG: 'bench',
    // The rate limit must not cap the load, as enterprise's default 10,000/s per source can; raised, its
    // check still runs and counts every request.
    RELAY_DEFAULT_PLAN: 'enterprise',
    RELAY_ENTERPRISE_REQUESTS_PER_SECOND: '10000000',
  };
  const logger = createLogger({ level: 'silent' });
  const setup = await startRelay(loadConfig(env), { logger });
  const created = await apiClient(setup.url, API_KEY)('POST', '/api/sources', {
    body: { name: 'Bench', slug: 'codehost', provider: 'codehost', verificationConfig: VERIFICATION, dedupEnabled: true },
  });
  if (created.status !== 201) throw new Error(`creating the bench source failed: ${created.status} ${created.text}`);
  await setup.close();
  const relay = await startRelay(loadConfig({ ...env, RELAY_ROLE: role }), { logger });
  const cpuAtStart = process.cpuUsage();
  const admin = relay.broker.admin();
  const ingestLag = () => admin.lag(ROUTER_GROUP, [INGEST_TOPIC]);
  return {
    ready: readyAt(relay.url),
    async stop() {
      // Requests still in flight when the load stopped finish within milliseconds.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const acknowledged = (await ingestLag()).reduce((sum, partition) => sum + Number(partition.end), 0);
      const cpuMicrosPerRequest = cpuMicros(cpuAtStart) / acknowledged;
      let storedEvents: number | undefined;
      if (role === 'all') {
        // Let the router store everything that was acknowledged, then count it.
        const deadline = Date.now() + 60_000;
        while ((await ingestLag()).some((partition) => partition.lag > 0) && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const [row] = await relay.store.sql.all<{ count: number }>('SELECT COUNT(*) AS count FROM events');
        storedEvents = Number(row!.count);
      }
      await relay.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
      return { cpuMicrosPerRequest, acknowledged, storedEvents };
    },
  };
}

const STARTS = {
  bare: () => startBare(),
  forward: () => startBare(process.argv[3]),
  shell: () => startShell(shellRoute),
  verify: () => startShell(verifyRoute),
  gateway: () => startEmbeddedRelay('gateway'),
  all: () => startEmbeddedRelay('all'),
};
const kind = process.argv[2];
if (!kind || !Object.hasOwn(STARTS, kind)) throw new Error(`usage: bench-target.ts ${Object.keys(STARTS).join('|')}`);
const target = await STARTS[kind as keyof typeof STARTS]();
process.send!({ ready: target.ready });
process.on('message', async (message: { stop?: boolean }) => {
  if (!message.stop) return;
  const report = await target.stop();
  process.send!({ report }, () => process.exit(0));
});
