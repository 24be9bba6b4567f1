import type { ProviderVerificationType } from './verification-config.js';

/** The header each provider's signature arrives in (names lower-cased, as Node gives them). */
export const PROVIDER_SIGNATURE_HEADERS: Readonly<Record<ProviderVerificationType, string>> = {
  codehost: 'x-hub-signature-256',
  payments: 'stripe-signature',
  chat: 'x-slack-signature',
  commerce: 'x-shopify-hmac-sha256',
  telecom: 'x-twilio-signature',
  standard: 'webhook-signature',
};

/**
 * The header a source's signature arrives in, from its verification settings as stored (secret apart):
 * the provider's for a provider type, the configured one for `hmac`, none for `none` or anything unknown.
 */
export function signatureHeaderOf(verification: { type?: unknown; header?: unknown }): string | null {
  const { type, header } = verification;
  if (type === 'hmac') return typeof header === 'string' ? header.toLowerCase() : null;
  return typeof type === 'string' && Object.hasOwn(PROVIDER_SIGNATURE_HEADERS, type)
    ? PROVIDER_SIGNATURE_HEADERS[type as ProviderVerificationType]
    : null;
}
