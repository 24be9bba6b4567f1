import { applicableDestinationHeaders, forwardableProviderHeaders } from './forwarded-headers.js';
import { signStandardWebhook } from './standard-webhooks-signature.js';

export type DeliveryMethod = 'POST' | 'PUT' | 'PATCH';

/** SPEC 2.3.1: the shape of `authConfig` follows `authType`. */
export type DestinationAuth =
  | { authType: 'none'; authConfig?: unknown }
  | { authType: 'basic'; authConfig: { username: string; password: string } }
  | { authType: 'bearer'; authConfig: { token: string } }
  | { authType: 'api_key'; authConfig: { headerName: string; key: string } }
  | { authType: 'custom_header'; authConfig: { headerName: string; headerValue: string } };

export type DeliveryDestination = DestinationAuth & {
  url: string;
  method: DeliveryMethod;
  headers: Record<string, string>;
  /** `whsec_` + base64 of the key. */
  signingSecret: string;
  /** The secret before a rotation with a grace period: signed with too, after the new one, until `expiresAt` (ms). */
  previousSigningSecret?: { secret: string; expiresAt: number };
};

export interface DeliveryEvent {
  eventId: string;
  sourceId: string;
  /** Sent as X-Relay-Source when known; the source id otherwise. */
  sourceSlug?: string;
  rawBody: Buffer;
  contentType?: string | null;
  /** As received at ingest, names lower-cased. */
  providerHeaders: Record<string, string>;
  signatureValid: boolean;
}

export interface DeliveryRequestInput {
  destination: DeliveryDestination;
  event: DeliveryEvent;
  deliveryId: string;
  /** 1-based. */
  attemptNumber: number;
  nowMs: number;
  /** The attempt span's W3C context: the destination's request continues the webhook's trace. */
  traceparent?: string;
}

export interface DeliveryRequest {
  method: DeliveryMethod;
  url: string;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * Builds one attempt's request. Headers are laid in layers, a later layer replacing an earlier one
 * with the same name in any letter case: provider headers (filtered) and Content-Type, the
 * destination's headers, the auth header, the X-Relay-* headers and traceparent, the Standard Webhooks signature.
 * The signature covers this attempt's timestamp, so each attempt is signed afresh.
 */
export function buildDeliveryRequest(input: DeliveryRequestInput): DeliveryRequest {
  const { destination, event, deliveryId, attemptNumber, nowMs } = input;
  const headers = new HeaderLayers();

  for (const [name, value] of forwardableProviderHeaders(event.providerHeaders)) headers.set(name, value);
  if (event.contentType) headers.set('content-type', event.contentType);

  for (const [name, value] of applicableDestinationHeaders(destination.headers)) headers.set(name, value);

  const auth = authHeader(destination);
  if (auth) headers.set(auth[0], auth[1]);

  headers.set('X-Relay-Event-Id', event.eventId);
  headers.set('X-Relay-Delivery-Id', deliveryId);
  headers.set('X-Relay-Attempt', String(attemptNumber));
  headers.set('X-Relay-Source', event.sourceSlug ?? event.sourceId);
  if (!event.signatureValid) headers.set('X-Relay-Signature-Valid', 'false');
  // Replaces the sender's own: the request's parent is this attempt, in the sender's trace.
  if (input.traceparent) headers.set('traceparent', input.traceparent);

  const timestamp = Math.floor(nowMs / 1000);
  headers.set('webhook-id', deliveryId);
  headers.set('webhook-timestamp', String(timestamp));
  headers.set('webhook-signature', signatures(destination, nowMs).map((secret) => signStandardWebhook(secret, deliveryId, timestamp, event.rawBody)).join(' '));

  return { method: destination.method, url: destination.url, headers: headers.toRecord(), body: event.rawBody };
}

/** The secrets a request is signed with, new first (Standard Webhooks: space-separated signatures). */
function signatures(destination: DeliveryDestination, nowMs: number): string[] {
  const previous = destination.previousSigningSecret;
  return previous && nowMs < previous.expiresAt ? [destination.signingSecret, previous.secret] : [destination.signingSecret];
}

function authHeader(destination: DestinationAuth): [string, string] | undefined {
  switch (destination.authType) {
    case 'none':
      return undefined;
    case 'basic': {
      const { username, password } = destination.authConfig;
      return ['Authorization', `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`];
    }
    case 'bearer':
      return ['Authorization', `Bearer ${destination.authConfig.token}`];
    case 'api_key':
      return [destination.authConfig.headerName, destination.authConfig.key];
    case 'custom_header':
      return [destination.authConfig.headerName, destination.authConfig.headerValue];
  }
}

/** Case-insensitive header map that keeps the spelling of the layer that wrote the value last. */
class HeaderLayers {
  private readonly entries = new Map<string, [string, string]>();

  set(name: string, value: string): void {
    this.entries.set(name.toLowerCase(), [name, value]);
  }

  toRecord(): Record<string, string> {
    return Object.fromEntries(this.entries.values());
  }
}
