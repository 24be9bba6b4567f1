import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP/HTTP JSON export carries it, ids as hex. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for the first span of a trace started here. */
  parentSpanId: string;
  name: string;
  serviceName: string;
  attributes: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT (the exporter posts to `/v1/traces`). */
  url: string;
  spans(): ReceivedSpan[];
  close(): Promise<void>;
}

interface AnyValue {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
}
interface KeyValue {
  key: string;
  value: AnyValue;
}
interface ExportRequest {
  resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: (Omit<ReceivedSpan, 'serviceName' | 'attributes'> & { attributes?: KeyValue[] })[] }[] }[];
}

const valueOf = (value: AnyValue): unknown => value.stringValue ?? (value.intValue === undefined ? undefined : Number(value.intValue)) ?? value.boolValue ?? value.doubleValue;
const attributesOf = (list: KeyValue[] = []) => Object.fromEntries(list.map(({ key, value }) => [key, valueOf(value)]));
/** The JSON encoding gives ids in hex; base64 is read too, as the OTLP JSON mapping once specified it. */
const hexId = (id: string | undefined): string => (id === undefined || id === '' ? '' : /^[0-9a-f]+$/.test(id) ? id : Buffer.from(id, 'base64').toString('hex'));

/**
 * A real OTLP/HTTP receiver on 127.0.0.1: it accepts the JSON trace exports the SDK's exporter posts
 * and keeps every span, for tests that check what a relay exported.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: ReceivedSpan[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url !== '/v1/traces' || !String(request.headers['content-type']).includes('json')) {
        response.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest;
      for (const resource of body.resourceSpans ?? []) {
        const serviceName = String(attributesOf(resource.resource?.attributes)['service.name']);
        for (const scope of resource.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            received.push({ traceId: hexId(span.traceId), spanId: hexId(span.spanId), parentSpanId: hexId(span.parentSpanId), name: span.name, serviceName, attributes: attributesOf(span.attributes) });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => [...received],
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
