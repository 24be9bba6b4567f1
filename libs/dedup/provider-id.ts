import { singleHeader, type HeaderMap } from '../signatures/header-map.js';

/** A source's `provider` setting. */
export type SourceProvider = 'codehost' | 'payments' | 'commerce' | 'chat' | 'telecom' | 'custom' | 'generic';

/** Senders whose deliveries carry an event id that stays the same across their retries. */
export type IdProvider = 'codehost' | 'payments' | 'chat' | 'commerce' | 'telecom' | 'standard';

export interface ProviderIdRequest {
  headers: HeaderMap;
  /** The parsed body when it is JSON. */
  json?: unknown;
}

export interface ProviderId {
  provider: IdProvider;
  id: string;
}

interface ProviderIdRule {
  /** A header only this sender sends: its presence identifies the sender when the source does not say. */
  marker: string;
  id(request: ProviderIdRequest): string | undefined;
}

export function headerValue(headers: HeaderMap, name: string): string | undefined {
  const value = singleHeader(headers, name);
  return typeof value === 'string' ? value : undefined;
}

function bodyField(json: unknown, field: string): string | undefined {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return undefined;
  const value = (json as Record<string, unknown>)[field];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

const fromHeader =
  (name: string) =>
  ({ headers }: ProviderIdRequest): string | undefined =>
    headerValue(headers, name);

const RULES: Record<IdProvider, ProviderIdRule> = {
  codehost: {
    marker: 'x-github-delivery',
    // A redelivery keeps its delivery id; the hook id tells apart the hooks that share a delivery.
    id: ({ headers }) => {
      const delivery = headerValue(headers, 'x-github-delivery');
      const hook = headerValue(headers, 'x-github-hook-id');
      return delivery && hook ? `${delivery}:${hook}` : delivery;
    },
  },
  payments: { marker: 'stripe-signature', id: ({ json }) => bodyField(json, 'id') },
  chat: { marker: 'x-slack-signature', id: ({ json }) => bodyField(json, 'event_id') },
  commerce: { marker: 'x-shopify-webhook-id', id: fromHeader('x-shopify-webhook-id') },
  telecom: { marker: 'i-twilio-idempotency-token', id: fromHeader('i-twilio-idempotency-token') },
  standard: { marker: 'webhook-id', id: fromHeader('webhook-id') },
};

const ID_PROVIDERS = Object.keys(RULES) as IdProvider[];

function isIdProvider(provider: SourceProvider | null | undefined): provider is SourceProvider & IdProvider {
  return provider !== null && provider !== undefined && Object.hasOwn(RULES, provider);
}

/**
 * The sender's own event id: from the source's declared provider first, then from any sender the
 * headers identify. Body ids (payments, chat) are only trusted once the sender is known, since an
 * arbitrary payload's `id` usually names a resource, not a delivery.
 */
export function providerId(provider: SourceProvider | null | undefined, request: ProviderIdRequest): ProviderId | undefined {
  const detected = ID_PROVIDERS.filter((candidate) => headerValue(request.headers, RULES[candidate].marker) !== undefined);
  const candidates = isIdProvider(provider) ? [provider, ...detected] : detected;
  for (const candidate of candidates) {
    const id = RULES[candidate].id(request);
    if (id !== undefined) return { provider: candidate, id };
  }
  return undefined;
}
