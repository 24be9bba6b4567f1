import type { HeaderMap } from '../signatures/header-map.js';
import { sha256Hex } from './payload-hash.js';
import { headerValue, providerId, type SourceProvider } from './provider-id.js';

export type DedupStrategy = 'auto' | 'provider_id' | 'payload_hash' | 'idempotency_key' | 'none';

/** The source's dedup settings (a stored source row fits as is). */
export interface DedupSettings {
  dedupEnabled: boolean;
  dedupStrategy: DedupStrategy;
  dedupWindowHours: number;
  dedupCustomHeader?: string | null;
  provider?: SourceProvider | null;
  /** A source that encrypts fields keeps no id read from its bodies in clear (dedup keys are stored as they are). */
  encryptFields?: readonly string[];
}

export interface DedupInput {
  source: DedupSettings;
  rawBody: Buffer;
  /** The parsed body when it is JSON (may be a getter: only provider ids of body-id senders read it). */
  json?: unknown;
  /** Names lower-cased. */
  headers: HeaderMap;
  /** The body's SHA-256 in hex, when the caller has computed it already. */
  bodySha256?: string;
}

/** A key the store checks and inserts in one atomic step, scoped to the source; a hit within windowMs is a duplicate. */
export interface DedupKey {
  key: string;
  windowMs: number;
}

/** SPEC 6: an identical payload within 5 minutes is always a duplicate. */
export const IDENTICAL_PAYLOAD_WINDOW_MS = 5 * 60_000;
const HOUR_MS = 3_600_000;
// Ids come from request headers and bodies; a bounded key keeps the store's unique index usable.
const MAX_VERBATIM_ID_LENGTH = 200;

function idPart(id: string, source: DedupSettings): string {
  return id.length <= MAX_VERBATIM_ID_LENGTH && !source.encryptFields?.length ? id : `sha256:${sha256Hex(id)}`;
}

function providerIdKey(input: DedupInput): string | undefined {
  const found = providerId(input.source.provider, input);
  return found && `pid:${found.provider}:${idPart(found.id, input.source)}`;
}

function strategyKey(input: DedupInput, hashKey: string): string | undefined {
  const { source, headers } = input;
  switch (source.dedupStrategy) {
    case 'auto':
      return providerIdKey(input) ?? hashKey;
    case 'provider_id':
      return providerIdKey(input);
    case 'payload_hash':
      return hashKey;
    case 'idempotency_key': {
      const value = source.dedupCustomHeader ? headerValue(headers, source.dedupCustomHeader.toLowerCase()) : undefined;
      return value && `idem:${idPart(value, input.source)}`;
    }
    case 'none':
      return undefined;
  }
}

/**
 * The keys under which this request is a duplicate: always `hash:<sha256 hex>` for 5 minutes, and,
 * when dedup is enabled, the strategy's key for `dedupWindowHours` (`pid:<provider>:<id>`,
 * `idem:<value>`). When the strategy's key is the payload hash itself, the one key gets the longer window.
 */
export function dedupKeys(input: DedupInput): DedupKey[] {
  const hashKey = `hash:${input.bodySha256 ?? sha256Hex(input.rawBody)}`;
  const key = input.source.dedupEnabled ? strategyKey(input, hashKey) : undefined;
  const windowMs = input.source.dedupWindowHours * HOUR_MS;
  if (key === undefined) return [{ key: hashKey, windowMs: IDENTICAL_PAYLOAD_WINDOW_MS }];
  if (key === hashKey) return [{ key: hashKey, windowMs: Math.max(IDENTICAL_PAYLOAD_WINDOW_MS, windowMs) }];
  return [
    { key: hashKey, windowMs: IDENTICAL_PAYLOAD_WINDOW_MS },
    { key, windowMs },
  ];
}
