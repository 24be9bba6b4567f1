import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { performance } from 'node:perf_hooks';
import { Agent } from 'undici';
import { RefusedAddressError } from './address-policy.js';
import type { AttemptErrorKind, AttemptOutcome } from './attempt-outcome.js';
import type { DeliveryRequest } from './build-request.js';
import { createGuardedConnector, type ResolveHost } from './guarded-connector.js';
import { parseRetryAfterMs } from './retry-after.js';

/**
 * Keep-alive connections per destination origin by default, and so the deliverer's requests in flight
 * per destination. A request's answer is read on the next event-loop turn, so a busy loop delivers at
 * most this many per destination per turn: 16 fell behind ingest at 50 concurrent requests (bench/relay).
 */
export const DEFAULT_CONNECTIONS_PER_ORIGIN = 64;

export interface HttpSenderOptions {
  /** Also refuse loopback, private, unique-local, CGNAT and other non-public addresses. */
  blockPrivateDestinations: boolean;
  /** Keep-alive connections per destination origin (default `DEFAULT_CONNECTIONS_PER_ORIGIN`). */
  connectionsPerOrigin?: number;
  keepAliveTimeoutMs?: number;
  /** A connection not established by then fails as a timeout even if the attempt's timeoutMs is longer. */
  connectTimeoutMs?: number;
  /** How much of a response body is kept (and recorded). */
  responseBodyLimitBytes?: number;
  /**
   * A body beyond the kept part is read and discarded up to this size so the connection can be
   * reused; past it the connection is dropped instead of reading on.
   */
  responseDrainLimitBytes?: number;
  resolveHost?: ResolveHost;
}

export interface HttpSender {
  /** Never rejects: every failure is an outcome. `timeoutMs` covers connect, headers and body. */
  send(request: DeliveryRequest, options: { timeoutMs: number }): Promise<AttemptOutcome>;
  close(): Promise<void>;
}

const RECORDED_RESPONSE_HEADERS = ['content-type', 'content-length', 'location', 'retry-after', 'x-request-id'];

const ERROR_KINDS_BY_CODE: Record<string, AttemptErrorKind> = {
  ENOTFOUND: 'dns',
  EAI_AGAIN: 'dns',
  EAI_FAIL: 'dns',
  EAI_NODATA: 'dns',
  EAI_NONAME: 'dns',
  ECONNREFUSED: 'connect',
  EHOSTUNREACH: 'connect',
  ENETUNREACH: 'connect',
  EADDRNOTAVAIL: 'connect',
  ECONNRESET: 'reset',
  EPIPE: 'reset',
  UND_ERR_SOCKET: 'reset',
  ETIMEDOUT: 'timeout',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
  UND_ERR_HEADERS_TIMEOUT: 'timeout',
  UND_ERR_BODY_TIMEOUT: 'timeout',
  // Node's TLS handshake failures: the certificate, its chain, or the name it was issued for.
  ...Object.fromEntries(
    [
      'CERT_HAS_EXPIRED',
      'CERT_NOT_YET_VALID',
      'DEPTH_ZERO_SELF_SIGNED_CERT',
      'SELF_SIGNED_CERT_IN_CHAIN',
      'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
      'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      'ERR_TLS_CERT_ALTNAME_INVALID',
      'ERR_SSL_WRONG_VERSION_NUMBER',
      'EPROTO',
    ].map((code) => [code, 'tls' as const]),
  ),
};

/**
 * The HTTP client for deliveries and destination tests: keep-alive pools per origin, no redirect
 * following (undici 7 follows none without the redirect interceptor), a connect-time SSRF guard,
 * and a response body capped in memory.
 */
export function createHttpSender(options: HttpSenderOptions): HttpSender {
  const bodyLimit = options.responseBodyLimitBytes ?? 10 * 1024;
  const drainLimit = options.responseDrainLimitBytes ?? 256 * 1024;
  const agent = new Agent({
    connections: options.connectionsPerOrigin ?? DEFAULT_CONNECTIONS_PER_ORIGIN,
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 4_000,
    connect: createGuardedConnector({
      blockPrivateDestinations: options.blockPrivateDestinations,
      resolveHost: options.resolveHost,
      connectTimeoutMs: options.connectTimeoutMs,
    }),
  });

  async function send(request: DeliveryRequest, { timeoutMs }: { timeoutMs: number }): Promise<AttemptOutcome> {
    const startedAt = performance.now();
    const elapsed = (): number => Math.round(performance.now() - startedAt);
    const deadline = new Deadline();
    let statusCode: number | null = null;
    const timer = setTimeout(() => deadline.abort(), timeoutMs);
    try {
      const url = new URL(request.url);
      const response = await agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: request.method,
        headers: request.headers,
        body: request.body,
        signal: deadline,
      });
      statusCode = response.statusCode;
      const body = await readCapped(response.body, bodyLimit, drainLimit);
      return answeredOutcome(response.statusCode, response.headers, body, elapsed());
    } catch (error) {
      const errorKind = deadline.aborted ? 'timeout' : errorKindOf(error);
      const message = deadline.aborted ? `No complete response within ${timeoutMs} ms` : describe(error, hostOf(request.url));
      return { ok: false, statusCode, latencyMs: elapsed(), responseBody: '', responseHeaders: {}, error: message, errorKind };
    } finally {
      clearTimeout(timer);
    }
  }

  return { send, close: () => agent.close() };
}

/**
 * An attempt's deadline as undici takes a signal: an EventEmitter with `aborted`, its documented
 * alternative to an AbortSignal. An AbortController's signal, whose listener undici adds and removes for
 * every request (an EventTarget's), cost 9-12 µs more a request (bench/delivery/bench-delivery-client.ts).
 */
class Deadline extends EventEmitter {
  aborted = false;

  abort(): void {
    this.aborted = true;
    this.emit('abort');
  }
}

function answeredOutcome(statusCode: number, headers: IncomingHttpHeaders, body: Buffer, latencyMs: number): AttemptOutcome {
  const responseHeaders: Record<string, string> = {};
  for (const name of RECORDED_RESPONSE_HEADERS) {
    const value = headers[name];
    if (value !== undefined) responseHeaders[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  // stream: true holds back a multi-byte character cut by the limit instead of mangling it.
  const responseBody = new TextDecoder('utf-8').decode(body, { stream: true });
  const outcome: AttemptOutcome = { ok: statusCode >= 200 && statusCode < 300, statusCode, latencyMs, responseBody, responseHeaders };
  if (outcome.ok) return outcome;
  outcome.errorKind = 'http_status';
  outcome.error = `HTTP ${statusCode}`;
  if (statusCode === 429 || statusCode === 503) {
    const retryAfterMs = parseRetryAfterMs(responseHeaders['retry-after'], Date.now());
    if (retryAfterMs !== undefined) outcome.retryAfterMs = retryAfterMs;
  }
  return outcome;
}

/** Keeps the first `keepBytes`; discards the rest, dropping the connection past `drainLimitBytes`. */
function readCapped(body: Readable, keepBytes: number, drainLimitBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const kept: Buffer[] = [];
    let keptBytes = 0;
    let seenBytes = 0;
    let droppedByUs = false;
    const finish = (): void => resolve(Buffer.concat(kept));
    body.on('data', (chunk: Buffer) => {
      seenBytes += chunk.length;
      if (keptBytes < keepBytes) {
        const part = Buffer.from(chunk.subarray(0, keepBytes - keptBytes));
        kept.push(part);
        keptBytes += part.length;
      }
      if (seenBytes > drainLimitBytes && !droppedByUs) {
        droppedByUs = true;
        body.destroy();
      }
    });
    body.once('end', finish);
    // undici reports our own destroy() as an aborted request: that is the planned end, not a failure.
    body.once('error', (error) => (droppedByUs ? finish() : reject(error)));
    body.once('close', () => droppedByUs && finish());
  });
}

function errorKindOf(error: unknown): AttemptErrorKind {
  if (error instanceof RefusedAddressError) return 'refused_address';
  // With several addresses (happy eyeballs) node reports an AggregateError of the per-address failures.
  const first = error instanceof AggregateError ? error.errors[0] : error;
  if (first instanceof RefusedAddressError) return 'refused_address';
  const code = (first as { code?: unknown } | null)?.code;
  return (typeof code === 'string' && ERROR_KINDS_BY_CODE[code]) || 'other';
}

/** What a network failure is called in an attempt's error, after its code. */
const NETWORK_FAILURES: Partial<Record<AttemptErrorKind, string>> = {
  dns: 'could not resolve',
  connect: 'could not connect to',
  reset: 'the connection was closed by',
  timeout: 'timed out reaching',
};

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the destination';
  }
}

/**
 * An attempt's error as the destination's owner reads it (test answers, deliveries, issues). It names the
 * host as configured, never an address it resolved to: node's and undici's own messages do
 * ("connect ECONNREFUSED 10.0.0.7:80"), and would map the network behind a name.
 */
function describe(error: unknown, host: string): string {
  if (error instanceof AggregateError && error.errors.length > 0) {
    return [...new Set(error.errors.map((inner: unknown) => describe(inner, host)))].join('; ');
  }
  if (!(error instanceof Error)) return String(error);
  if (error instanceof RefusedAddressError) return error.message;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return error.message;
  const failure = NETWORK_FAILURES[ERROR_KINDS_BY_CODE[code] ?? 'other'];
  if (failure) return `${code}: ${failure} ${host}`;
  // Another system error of a socket names the address it failed on.
  if ('address' in error) return `${code}: ${(error as { syscall?: string }).syscall ?? 'network'} failed for ${host}`;
  return error.message.includes(code) ? error.message : `${code}: ${error.message}`;
}
