import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '../errors/errors.js';
import { DEFAULT_PLAN_LIMITS } from './plan-limits.js';

export type Plan = 'free' | 'starter' | 'pro' | 'business' | 'enterprise';
export const PLANS: readonly Plan[] = ['free', 'starter', 'pro', 'business', 'enterprise'];
export type Role = 'all' | 'gateway' | 'router' | 'deliverer' | 'recorder' | 'api';
export const ROLES: readonly Role[] = ['all', 'gateway', 'router', 'deliverer', 'recorder', 'api'];

/** The whole configuration, read and validated once at start, then passed down. */
export interface Config {
  port: number;
  host: string;
  role: Role;
  /**
   * RELAY_THREADS: threads a process of role `all` runs on (default: the machine's cores). Past one, the
   * router, deliverer and recorder run on threads of their own beside the gateway and API's (on Kafka, one),
   * and the search indexer on one more.
   */
  threads: number;
  dataDir: string;
  databaseUrl?: string;
  kafkaBrokers?: string[];
  kafkaClientId: string;
  /** Prefix of the relay's topic and consumer group names on Kafka: relays sharing a cluster stay apart. */
  kafkaTopicPrefix: string;
  /** How long a Kafka fetch waits for records; lower means lower latency at more requests. */
  kafkaMaxWaitMs: number;
  /** Consumer group session timeout: how long a vanished member holds its partitions. */
  kafkaSessionTimeoutMs: number;
  /** A busy gateway sends at most one Kafka produce request per this time, with every webhook of it. */
  kafkaIngestGatherMs: number;
  apiKey?: string;
  org: string;
  defaultPlan: Plan;
  /** The enterprise plan's limits, "custom" in SPEC 8: set per installation. */
  enterpriseRequestsPerSecond: number;
  enterpriseMaxPayloadBytes: number;
  /** RELAY_PUBLIC_URL: the base providers and clients reach the relay at; unset, each request's own origin (requestOrigin). */
  publicUrl?: string;
  encryptionKey?: Buffer;
  fsync: 'normal' | 'full';
  retryJitter: number;
  /** Jobs of one source to one destination in flight at once, started in order; 1 = each waits for the previous answer. */
  maxInFlightPerSource: number;
  trustProxy: number;
  blockPrivateDestinations: boolean;
  payloadRetentionDays: number;
  eventRetentionDays: number;
  metricsToken?: string;
  /** METRICS_PORT: `/metrics` is served on this port of its own, not the ingest and API port (0: a free one); `off` serves it nowhere. */
  metricsPort: number | 'off';
  /** METRICS_HOST: the address the metrics port listens on. */
  metricsHost: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /**
   * RELAY_INGEST_MAX_IN_FLIGHT: ingest requests a gateway handles at once; past it, a request is answered
   * `503 OVERLOADED` at once (docs/decisions/0089-ingest-overload-shed.md).
   */
  ingestMaxInFlight: number;
  /** The standard OTEL_* variables this relay reads (libs/tracing/relay-tracer.ts); traces are exported only with an endpoint. */
  tracing: TracingConfig;
  /** RELAY_TRACE_URL_TEMPLATE: where the console links an event's trace, `{traceId}` replaced. */
  traceUrlTemplate?: string;
  /** RELAY_TRANSFORM_TIMEOUT_MS: a transformation's time per call. */
  transformTimeoutMs: number;
  /** RELAY_TRANSFORM_MEMORY_MB: a transformation's memory per call. */
  transformMemoryMb: number;
  shutdownTimeoutMs: number;
  /** RELAY_API_REQUESTS_PER_SECOND: each API key's sustained rate in one api process; bursts of twice that. */
  apiRequestsPerSecond: number;
  /** RELAY_MAX_ROUTES_PER_SOURCE: enabled routes a source may have, and destinations one event is replayed to at once. */
  maxRoutesPerSource: number;
}

/**
 * Threads of their own for the router, deliverer and recorder: a process of role `all` with more than one
 * thread has them. On Kafka at most one: with two, pipeline-threads.spec once saw a first delivery sent
 * twice in about one run of six (with the hand-over copies the lanes have since replaced); kept until more
 * runs back the change (docs/decisions/0017-pipeline-threads.md, "On Kafka, one pipeline thread still").
 */
export const pipelineThreadCount = (config: Pick<Config, 'role' | 'threads' | 'kafkaBrokers'>): number => {
  if (config.role !== 'all') return 0;
  return config.kafkaBrokers ? Math.min(1, config.threads - 1) : config.threads - 1;
};

type Env = Record<string, string | undefined>;

function read(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  if (!/^-?\d+$/.test(raw)) throw new ConfigError(name, `expected an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function decimal(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new ConfigError(name, `must be a number between ${min} and ${max}, got "${raw}"`);
  }
  return value;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = read(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = read(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(name, `expected true or false, got "${raw}"`);
}

/** METRICS_PORT: a port, or `off`. */
function metricsPort(env: Env): number | 'off' {
  return read(env, 'METRICS_PORT')?.toLowerCase() === 'off' ? 'off' : integer(env, 'METRICS_PORT', 9464, 0, 65535);
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = read(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, 'is not a valid URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got ${parsed.protocol}`);
  }
  return raw.replace(/\/+$/, '');
}

function encryptionKey(env: Env): Buffer | undefined {
  const raw = read(env, 'RELAY_ENCRYPTION_KEY');
  if (raw === undefined) return undefined;
  const key = Buffer.from(raw, 'base64');
  if (key.length !== 32) throw new ConfigError('RELAY_ENCRYPTION_KEY', `must be 32 bytes in base64, got ${key.length} bytes`);
  return key;
}

function brokers(env: Env): string[] | undefined {
  const raw = read(env, 'KAFKA_BROKERS');
  if (raw === undefined) return undefined;
  const list = raw.split(',').map((b) => b.trim()).filter(Boolean);
  for (const broker of list) {
    if (!/^[^\s:/]+:\d{1,5}$/.test(broker)) throw new ConfigError('KAFKA_BROKERS', `"${broker}" is not host:port`);
  }
  return list;
}

function topicPrefix(env: Env): string {
  const raw = read(env, 'KAFKA_TOPIC_PREFIX') ?? '';
  if (!/^[a-zA-Z0-9._-]{0,64}$/.test(raw)) throw new ConfigError('KAFKA_TOPIC_PREFIX', 'must be at most 64 of a-z A-Z 0-9 . _ -');
  return raw;
}

/** Measured on the default at its sustained rates (docs/decisions/0089-ingest-overload-shed.md). */
export const DEFAULT_INGEST_MAX_IN_FLIGHT = 512;

export interface TracingConfig {
  /** OTEL_SDK_DISABLED: no SDK at all, so no span and no id of the relay's own; a sender's `traceparent` still travels on. */
  sdkDisabled?: boolean;
  /** OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the full URL), else OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`; unset: nothing exported. */
  tracesEndpoint?: string;
  /** OTEL_SERVICE_NAME, default `webhook-relay`. */
  serviceName: string;
  /** OTEL_TRACES_SAMPLER_ARG when OTEL_TRACES_SAMPLER is `traceidratio` or `parentbased_traceidratio`: the share of new traces exported. */
  sampleRatio: number;
}

function tracing(env: Env): TracingConfig {
  const base = url(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', ['http:', 'https:']);
  const tracesEndpoint = url(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', ['http:', 'https:']) ?? (base === undefined ? undefined : `${base}/v1/traces`);
  const sampler = oneOf(env, 'OTEL_TRACES_SAMPLER', ['always_on', 'parentbased_always_on', 'traceidratio', 'parentbased_traceidratio'] as const, 'parentbased_always_on');
  const sampleRatio = sampler.endsWith('traceidratio') ? decimal(env, 'OTEL_TRACES_SAMPLER_ARG', 1, 0, 1) : 1;
  return { sdkDisabled: bool(env, 'OTEL_SDK_DISABLED', false), tracesEndpoint, serviceName: read(env, 'OTEL_SERVICE_NAME') ?? 'webhook-relay', sampleRatio };
}

function traceUrlTemplate(env: Env): string | undefined {
  const raw = read(env, 'RELAY_TRACE_URL_TEMPLATE');
  if (raw !== undefined && !raw.includes('{traceId}')) throw new ConfigError('RELAY_TRACE_URL_TEMPLATE', 'must contain {traceId}');
  if (raw !== undefined) url(env, 'RELAY_TRACE_URL_TEMPLATE', ['http:', 'https:']);
  return raw;
}

const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** Reads and validates the environment. Throws ConfigError naming the first bad variable. */
export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const org = read(env, 'RELAY_ORG') ?? 'default';
  if (!SLUG.test(org)) throw new ConfigError('RELAY_ORG', 'must be lowercase alphanumeric with hyphens');
  const apiKey = read(env, 'RELAY_API_KEY');
  if (apiKey !== undefined && apiKey.length < 16) throw new ConfigError('RELAY_API_KEY', 'must be at least 16 characters');
  const config: Config = {
    port,
    host: read(env, 'HOST') ?? '0.0.0.0',
    role: oneOf(env, 'RELAY_ROLE', ROLES, 'all'),
    threads: integer(env, 'RELAY_THREADS', os.availableParallelism(), 1, 64),
    dataDir: path.resolve(read(env, 'RELAY_DATA_DIR') ?? './data'),
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    kafkaBrokers: brokers(env),
    kafkaClientId: read(env, 'KAFKA_CLIENT_ID') ?? 'webhook-relay',
    kafkaTopicPrefix: topicPrefix(env),
    kafkaMaxWaitMs: integer(env, 'KAFKA_MAX_WAIT_MS', 500, 10, 10000),
    kafkaSessionTimeoutMs: integer(env, 'KAFKA_SESSION_TIMEOUT_MS', 30000, 6000, 300000),
    kafkaIngestGatherMs: integer(env, 'KAFKA_INGEST_GATHER_MS', 40, 0, 1000),
    apiKey,
    org,
    defaultPlan: oneOf(env, 'RELAY_DEFAULT_PLAN', PLANS, 'pro'),
    enterpriseRequestsPerSecond: integer(env, 'RELAY_ENTERPRISE_REQUESTS_PER_SECOND', DEFAULT_PLAN_LIMITS.enterprise.requestsPerSecond, 1, 10_000_000),
    enterpriseMaxPayloadBytes: integer(env, 'RELAY_ENTERPRISE_MAX_PAYLOAD_BYTES', DEFAULT_PLAN_LIMITS.enterprise.maxPayloadBytes, 1024, 100 * 1024 * 1024),
    publicUrl: url(env, 'RELAY_PUBLIC_URL', ['http:', 'https:']),
    encryptionKey: encryptionKey(env),
    fsync: oneOf(env, 'RELAY_FSYNC', ['normal', 'full'] as const, 'normal'),
    retryJitter: decimal(env, 'RELAY_RETRY_JITTER', 0.1, 0, 1),
    // At most the deliverer's places per destination (64), which a source's window could never exceed.
    maxInFlightPerSource: integer(env, 'RELAY_MAX_IN_FLIGHT_PER_SOURCE', 64, 1, 64),
    trustProxy: integer(env, 'RELAY_TRUST_PROXY', 0, 0, 10),
    blockPrivateDestinations: bool(env, 'RELAY_BLOCK_PRIVATE_DESTINATIONS', true),
    payloadRetentionDays: integer(env, 'RELAY_PAYLOAD_RETENTION_DAYS', 30, 1, 3650),
    eventRetentionDays: integer(env, 'RELAY_EVENT_RETENTION_DAYS', 90, 1, 3650),
    metricsToken: read(env, 'RELAY_METRICS_TOKEN'),
    metricsPort: metricsPort(env),
    // Loopback unless asked: the metrics name every organization's destinations.
    metricsHost: read(env, 'METRICS_HOST') ?? '127.0.0.1',
    logLevel: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    tracing: tracing(env),
    traceUrlTemplate: traceUrlTemplate(env),
    shutdownTimeoutMs: integer(env, 'RELAY_SHUTDOWN_TIMEOUT_MS', 15000, 0, 600000),
    apiRequestsPerSecond: integer(env, 'RELAY_API_REQUESTS_PER_SECOND', 100, 1, 1_000_000),
    // At most the deliveries one bulk replay may create, so one event's replay always fits in one.
    maxRoutesPerSource: integer(env, 'RELAY_MAX_ROUTES_PER_SOURCE', 100, 1, 10_000),
    ingestMaxInFlight: integer(env, 'RELAY_INGEST_MAX_IN_FLIGHT', DEFAULT_INGEST_MAX_IN_FLIGHT, 1, 100_000),
    transformTimeoutMs: integer(env, 'RELAY_TRANSFORM_TIMEOUT_MS', 100, 1, 10_000),
    transformMemoryMb: integer(env, 'RELAY_TRANSFORM_MEMORY_MB', 16, 1, 1024),
    ...overrides,
  };
  if (config.payloadRetentionDays > config.eventRetentionDays) {
    throw new ConfigError('RELAY_PAYLOAD_RETENTION_DAYS', 'must not exceed RELAY_EVENT_RETENTION_DAYS');
  }
  return config;
}
