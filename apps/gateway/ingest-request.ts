import type { IncomingMessage } from 'node:http';
import { RateLimitedError } from '../../libs/errors/errors.js';
import { newId } from '../../libs/ids/ids.js';
import { dedupKeys } from '../../libs/dedup/dedup-keys.js';
import { payloadHash, sha256Hex } from '../../libs/dedup/payload-hash.js';
import { matchesAny, parseClientAddress } from '../../libs/net/ip-rules.js';
import { formFields, parsePayload } from '../../libs/payload/payload-document.js';
import { encodeIngestMessage, type IngestMeta } from '../../libs/pipeline/ingest-message.js';
import { verifySignature } from '../../libs/signatures/verify-signature.js';
import type { LedgerKey } from '../../libs/store/dedup-ledger.js';
import { IpNotAllowedError, InvalidSignatureError, SourceDisabledError, SourceNotFoundError } from './ingest-errors.js';
import { ranOutOfTime, type IngestDeadline } from './ingest-deadline.js';
import { readRawBody } from './raw-body.js';
import type { SourceRateLimits } from './source-rate-limits.js';
import type { ResolvedSource } from './source-resolver.js';
import { INGEST_TOPIC } from '../../libs/pipeline/topology.js';
import { withTraceparent } from '../../libs/tracing/record-trace.js';
import { endFailed, SpanKind, TRACEPARENT_HEADER, type RelayTracer, type Span } from '../../libs/tracing/relay-tracer.js';
import type { RequestLogContext } from '../../libs/http/request-context.js';

/** The ports ingest runs on; the composition root wires the store, the broker and the cache in. */
export interface IngestDeps {
  resolveSource(orgSlug: string, sourceSlug: string): Promise<ResolvedSource | null>;
  dedup: {
    claim(sourceId: string, keys: LedgerKey[], eventId: string, nowMs: number): Promise<string | null>;
    release(sourceId: string, keys: LedgerKey[], eventId: string): Promise<void>;
  };
  rateLimits: SourceRateLimits;
  publish(topic: string, message: ReturnType<typeof encodeIngestMessage>): Promise<void>;
  /** Seals a body (the secret box): a source with `encryptFields` never has its plaintext in the log. */
  seal(body: Buffer): Buffer;
  now(): number;
  tracer: RelayTracer;
}

export interface IngestInput {
  orgSlug: string;
  sourceSlug: string;
  request: IncomingMessage;
  clientIp: string | undefined;
  /** The URL the provider called, for signatures that cover it (telecom). */
  publicUrl: string;
  /** The path and raw query string called, which route filters read. */
  path: string;
  querystring: string;
  /** Bounds this request's waits on the store and the broker, and names what failed (ingest-deadline.ts). */
  deadline: IngestDeadline;
  /** Where the request's own log lines (access, unhandled error) find the ingest span: koa's `ctx.state`. */
  logContext?: RequestLogContext;
}

export interface IngestResult {
  eventId: string;
  status: 'received' | 'duplicate';
}

function checkIp(resolved: ResolvedSource, clientIp: string | undefined): void {
  const mode = resolved.source.ipFilterMode;
  if (mode === 'none') return;
  const address = clientIp === undefined ? undefined : parseClientAddress(clientIp);
  // An address that cannot be read cannot be shown to be outside a denylist either: fail closed.
  if (address === undefined) throw new IpNotAllowedError();
  const listed = matchesAny(address, resolved.ipRules);
  if (mode === 'allowlist' ? !listed : listed) throw new IpNotAllowedError();
}

/** The plan's requests per second and the source's own per-minute limit, counted across gateways. */
async function checkRate(deps: IngestDeps, resolved: ResolvedSource, nowMs: number): Promise<void> {
  const id = resolved.source.id;
  const perSecondLimit = resolved.limits.requestsPerSecond;
  if (!(await deps.rateLimits.take(`s:${id}`, 1000, perSecondLimit, nowMs))) throw new RateLimitedError(1000 - (nowMs % 1000), `Rate limit of ${perSecondLimit} requests per second exceeded`);
  const perMinuteLimit = resolved.source.rateLimitPerMinute;
  if (perMinuteLimit === null) return;
  if (!(await deps.rateLimits.take(`m:${id}`, 60_000, perMinuteLimit, nowMs))) throw new RateLimitedError(60_000 - (nowMs % 60_000), `Rate limit of ${perMinuteLimit} events per minute exceeded`);
}

/** The JSON body's value, when it is JSON small and shallow enough to read fields from. */
function parseJson(body: Buffer, contentType: string | null): unknown {
  const document = parsePayload(body, contentType);
  // Kept raw otherwise: a body that does not parse under its content type is still accepted.
  return document?.kind === 'json' ? document.value : undefined;
}

function receivedHeaders(request: IncomingMessage): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(request.headers)) if (value !== undefined) headers[name] = value;
  return headers;
}

/**
 * Accepts one webhook: resolve, filter, limit, read, verify, dedup, publish. Answers `received` only
 * after the broker holds the event durably; nothing is published for any refused request. Its span
 * continues the sender's `traceparent` or starts the webhook's trace, which the record carries on.
 */
export async function ingestRequest(deps: IngestDeps, input: IngestInput): Promise<IngestResult> {
  const inbound = input.request.headers[TRACEPARENT_HEADER];
  const span = deps.tracer.start('ingest', typeof inbound === 'string' ? inbound : undefined, {
    kind: SpanKind.SERVER,
    attributes: { 'relay.organization': input.orgSlug, 'relay.source': input.sourceSlug },
  });
  if (input.logContext) input.logContext.span = span;
  try {
    const result = await acceptWebhook(deps, input, span);
    span.setAttributes({ 'relay.event_id': result.eventId, 'relay.ingest_status': result.status });
    span.end();
    return result;
  } catch (error) {
    endFailed(span, error);
    throw error;
  }
}

async function acceptWebhook(deps: IngestDeps, input: IngestInput, span: Span): Promise<IngestResult> {
  const receivedAt = deps.now();
  const { deadline } = input;
  const resolved = await deadline.wait('store', deps.resolveSource(input.orgSlug, input.sourceSlug));
  if (!resolved) throw new SourceNotFoundError();
  if (!resolved.source.enabled) throw new SourceDisabledError();
  checkIp(resolved, input.clientIp);
  await deadline.wait('store', checkRate(deps, resolved, receivedAt));
  const body = await readRawBody(input.request, resolved.limits.maxPayloadBytes);
  const headers = receivedHeaders(input.request);
  const signature = verifySignature({ config: resolved.verification, previousSecret: resolved.previousSecret, rawBody: body, headers, publicUrl: input.publicUrl, nowMs: deps.now() });
  if (!signature.valid && resolved.source.rejectInvalidSignatures) throw new InvalidSignatureError(signature.reason ?? 'invalid');
  const validatedAt = deps.now();
  span.addEvent('verified', { 'relay.signature_valid': signature.valid });
  const contentType = typeof headers['content-type'] === 'string' ? headers['content-type'] : null;
  const eventId = newId('evt');
  const bodySha256 = sha256Hex(body);
  const keys = dedupKeys({
    source: resolved.source,
    rawBody: body,
    bodySha256,
    // Parsed only if a provider-id rule reads the body (payments, chat): most requests never need it.
    get json() {
      return parseJson(body, contentType);
    },
    headers,
  });
  const holder = await deadline.wait('store', deps.dedup.claim(resolved.source.id, keys, eventId, validatedAt));
  span.addEvent('deduplicated', { 'relay.duplicate': holder !== null });
  const meta: IngestMeta = {
    eventId: holder ?? eventId,
    orgId: resolved.org.id,
    sourceId: resolved.source.id,
    sourceSlug: resolved.source.slug,
    headers,
    contentType,
    clientIp: input.clientIp ?? null,
    payloadHash: payloadHash(body, bodySha256),
    payloadSize: body.length,
    signatureValid: signature.valid,
    receivedAt,
    validatedAt,
    queuedAt: deps.now(),
    path: input.path,
    query: formFields(input.querystring),
  };
  // Sealed before it reaches the log, whose records outlive the request by an hour or more.
  const sealed = resolved.source.encryptFields.length > 0;
  const logged = sealed ? { meta: { ...meta, sealed: true as const }, body: deps.seal(body) } : { meta, body };
  if (holder !== null) {
    // Answering `duplicate` promises the holder is durable; its own publish may have been lost to a crash (IngestMeta.duplicate).
    await deadline.wait('broker', deps.publish(INGEST_TOPIC, withTraceparent(encodeIngestMessage({ ...logged.meta, duplicate: true }, logged.body), span)));
    return { eventId: holder, status: 'duplicate' };
  }
  try {
    await deadline.wait('broker', deps.publish(INGEST_TOPIC, withTraceparent(encodeIngestMessage(logged.meta, logged.body), span)));
  } catch (error) {
    // Not acknowledged. A publish that failed frees the keys, so the provider's retry is a new event; the
    // release gets what the wait budget has left and runs on past it. One that timed out may still land:
    // its keys stay, and the retry is answered `duplicate` after publishing its copy under this id, so the
    // event is stored once, whichever record lands first (decision 0106).
    if (!ranOutOfTime(error)) await deadline.wait('store', deps.dedup.release(resolved.source.id, keys, eventId)).catch(() => undefined);
    throw error;
  }
  span.addEvent('published');
  return { eventId, status: 'received' };
}
