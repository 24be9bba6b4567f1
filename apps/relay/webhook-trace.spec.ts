import { expect } from 'chai';
import { BACKEND_TARGETS, describeEachBackend } from '../../libs/testing/backend-targets.js';
import { respond, startHttpSink, type HttpSink } from '../../libs/testing/http-sink.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../../libs/testing/otlp-receiver.js';
import { startRelayHarness, type RelayHarness } from '../../testing/relay-harness.js';
import { isDefined, waitFor } from '../../libs/testing/wait-for.js';
import { createLogger } from '../../libs/logging/logger.js';
import { postedLines } from '../../libs/logging/thread-log.js';

const SENDER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const SENDER_SPAN = 'b7ad6b7169203331';

interface LogLine {
  msg: string;
  path?: string;
  traceId?: string;
  spanId?: string;
}

/** The spans one webhook with one retry leaves: gateway, router, two attempts, the tier's wait, two writes. */
const EXPECTED = ['ingest', 'route', 'attempt', 'retry wait', 'attempt', 'record attempt', 'record attempt'];

function hasAll(spans: ReceivedSpan[]): boolean {
  const names = spans.map((span) => span.name);
  return EXPECTED.every((name) => names.filter((found) => found === name).length >= EXPECTED.filter((wanted) => wanted === name).length);
}

describeEachBackend('one trace per webhook, exported over OTLP', (target) => {
  // On Kafka a new destination's topic joins the deliverer's subscription through a group rebalance.
  const settleMs = target.name.includes('Kafka') ? 40_000 : 15_000;
  let receiver: OtlpReceiver;
  let harness: RelayHarness;
  let sink: HttpSink | undefined;
  // Debug: the gateway's access lines are debug (at ingest rates info would drown the rest).
  const lines: LogLine[] = [];
  const logger = createLogger({ level: 'debug', destination: postedLines((line) => void lines.push(JSON.parse(line) as LogLine)) });

  before(async function () {
    this.timeout(60_000);
    receiver = await startOtlpReceiver();
    harness = await startRelayHarness(this, target, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'relay-under-test' }, { logger });
  });

  after(async function () {
    this.timeout(30_000);
    await sink?.close();
    await harness?.stop();
    await receiver?.close();
  });

  it("continues the sender's trace through every hop, a retry included, to the destination's requests and the log lines", async function () {
    this.timeout(settleMs * 4);
    // The second answer, 410 Gone, disables the destination: a deliverer's line written under the attempt.
    sink = await startHttpSink([respond(500), respond(410)]);
    const source = await harness.api('POST', '/api/sources', { body: { name: 'Traced', slug: 'traced' } });
    const destination = await harness.api('POST', '/api/destinations', { body: { name: 'Traced receiver', url: `${sink.url}/hook`, retryPolicy: { maxRetries: 3, initialDelay: 100 } } });
    expect(destination.status, JSON.stringify(destination.body)).to.equal(201);
    expect((await harness.api('POST', '/api/routes', { body: { sourceId: source.body.id, destinationId: destination.body.id } })).status).to.equal(201);

    const ingested = await harness.send('/ingest/default/traced', '{"order":1}', { 'content-type': 'application/json', traceparent: `00-${SENDER_TRACE}-${SENDER_SPAN}-01` });
    expect(ingested.status, ingested.text).to.equal(200);

    const requests = await sink.waitForRequests(2, settleMs);
    const parents = requests.map((request) => String(request.headers.traceparent).split('-'));
    for (const [, traceId] of parents) expect(traceId).to.equal(SENDER_TRACE);

    const spans = await waitFor('the trace to be exported', () => receiver.spans().filter((span) => span.traceId === SENDER_TRACE), hasAll, settleMs * 2);
    expect(new Set(spans.map((span) => span.serviceName))).to.deep.equal(new Set(['relay-under-test']));
    const byName = (name: string) => spans.filter((span) => span.name === name);
    const [ingest] = byName('ingest');
    const [route] = byName('route');
    const [wait] = byName('retry wait');
    const attempts = byName('attempt').sort((a, b) => Number(a.attributes['relay.attempt']) - Number(b.attributes['relay.attempt']));
    expect(ingest!.parentSpanId).to.equal(SENDER_SPAN);
    expect(route!.parentSpanId).to.equal(ingest!.spanId);
    expect(attempts.map((span) => span.attributes['http.response.status_code'])).to.deep.equal([500, 410]);
    expect(attempts[0]!.parentSpanId).to.equal(route!.spanId);
    expect(wait!.parentSpanId).to.equal(attempts[0]!.spanId);
    expect(attempts[1]!.parentSpanId).to.equal(wait!.spanId);
    // Each request's parent is its own attempt's span.
    expect(parents.map(([, , parentId]) => parentId)).to.deep.equal(attempts.map((span) => span.spanId));
    expect(byName('record attempt').map((span) => span.parentSpanId).sort()).to.deep.equal(attempts.map((span) => span.spanId).sort());

    const event = await harness.api('GET', `/api/events/${ingested.body.eventId}`);
    expect(event.body.traceId).to.equal(SENDER_TRACE);

    // Each line names the span it was written under: the gateway's access line, the deliverer's 410 line.
    const access = lines.find((line) => line.msg === 'request' && line.path === '/ingest/default/traced');
    expect(access, 'the ingest access line').to.include({ traceId: event.body.traceId, spanId: ingest!.spanId });
    const gone = await waitFor('the 410 line', () => lines.find((line) => line.msg.startsWith('Destination answered 410 Gone')), isDefined, settleMs);
    expect(gone).to.include({ traceId: event.body.traceId, spanId: attempts[1]!.spanId });
  });
});

describe('a relay with no tracing SDK (OTEL_SDK_DISABLED) [embedded log + SQLite]', () => {
  let harness: RelayHarness;
  let sink: HttpSink;

  before(async function () {
    this.timeout(60_000);
    sink = await startHttpSink([respond(200)]);
    harness = await startRelayHarness(this, BACKEND_TARGETS[0]!, { OTEL_SDK_DISABLED: 'true' });
  });

  after(async function () {
    this.timeout(30_000);
    await sink?.close();
    await harness?.stop();
  });

  it("passes the sender's traceparent on as it came, and gives a webhook without one no traceparent and no trace id", async function () {
    this.timeout(30_000);
    const source = await harness.api('POST', '/api/sources', { body: { name: 'Untraced', slug: 'untraced' } });
    const destination = await harness.api('POST', '/api/destinations', { body: { name: 'Untraced receiver', url: `${sink.url}/hook` } });
    expect((await harness.api('POST', '/api/routes', { body: { sourceId: source.body.id, destinationId: destination.body.id } })).status).to.equal(201);
    const sent = `00-${SENDER_TRACE}-${SENDER_SPAN}-01`;
    const traced = await harness.send('/ingest/default/untraced', '{"order":1}', { 'content-type': 'application/json', traceparent: sent });
    const untraced = await harness.send('/ingest/default/untraced', '{"order":2}');

    const requests = await sink.waitForRequests(2, 15_000);
    const byEvent = new Map(requests.map((request) => [String(request.headers['x-relay-event-id']), request.headers.traceparent]));
    expect(byEvent.get(traced.body.eventId)).to.equal(sent);
    expect(byEvent.get(untraced.body.eventId)).to.equal(undefined);
    expect((await harness.api('GET', `/api/events/${traced.body.eventId}`)).body.traceId).to.equal(SENDER_TRACE);
    expect((await harness.api('GET', `/api/events/${untraced.body.eventId}`)).body.traceId).to.equal(null);
  });
});
