/** One ingest request as a provider sees it: the answer, its 503 fields, and how long it took. */
export interface IngestAnswer {
  marker: string;
  status: number;
  /** `received` or `duplicate` on a 200; the error code otherwise. */
  code: string;
  eventId?: string;
  /** The Retry-After header and the body's `retryAfter`, on a refusal that has them. */
  retryAfterHeader: string | null;
  retryAfter?: number;
  ms: number;
}

/** Posts `{marker}` as a JSON webhook and times the whole exchange, body included. */
export async function postTimedWebhook(ingestUrl: string, marker: string): Promise<IngestAnswer> {
  const started = performance.now();
  const response = await fetch(ingestUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ marker }) });
  const body = (await response.json()) as { eventId?: string; status?: string; code?: string; retryAfter?: number };
  return {
    marker,
    status: response.status,
    code: response.status === 200 ? body.status! : body.code!,
    eventId: body.eventId,
    retryAfterHeader: response.headers.get('retry-after'),
    retryAfter: body.retryAfter,
    ms: performance.now() - started,
  };
}

/** The markers of the webhooks a sink received, from their JSON bodies. */
export function receivedMarkers(bodies: readonly string[]): Set<string> {
  return new Set(bodies.map((body) => (JSON.parse(body) as { marker?: string }).marker).filter((marker): marker is string => marker !== undefined));
}
