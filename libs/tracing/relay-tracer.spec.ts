import { expect } from 'chai';
import { loadConfig } from '../config/config.js';
import { ConfigError } from '../errors/errors.js';
import { withTraceparent } from './record-trace.js';
import { createRelayTracer, logFields, parentContext, traceIdOf, traceparentOf } from './relay-tracer.js';

const SENDER = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('the relay tracer', () => {
  it('reads the standard OTEL_* variables, and exports nothing without an endpoint', () => {
    expect(loadConfig({}).tracing).to.deep.equal({ sdkDisabled: false, tracesEndpoint: undefined, serviceName: 'webhook-relay', sampleRatio: 1 });
    const configured = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/', OTEL_SERVICE_NAME: 'relay-eu', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' });
    expect(configured.tracing).to.deep.equal({ sdkDisabled: false, tracesEndpoint: 'http://collector:4318/v1/traces', serviceName: 'relay-eu', sampleRatio: 0.25 });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/traces' }).tracing.tracesEndpoint).to.equal('http://b:4318/traces');
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).to.throw(ConfigError, /OTEL_EXPORTER_OTLP_ENDPOINT/);
    expect(() => loadConfig({ RELAY_TRACE_URL_TEMPLATE: 'http://jaeger:16686/trace/' })).to.throw(ConfigError, /\{traceId\}/);
  });

  it('gives real ids with export off: a child keeps the trace, a new trace is never the zero one', async () => {
    const tracer = createRelayTracer({ serviceName: 'spec', sampleRatio: 1 });
    const child = tracer.start('child', SENDER);
    expect(child.isRecording()).to.equal(false);
    const [version, traceId, spanId] = traceparentOf(child)!.split('-');
    expect(version).to.equal('00');
    expect(traceId).to.equal('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(spanId).to.match(/^[0-9a-f]{16}$/).and.not.equal('00f067aa0ba902b7').and.not.match(/^0+$/);
    const fresh = tracer.start('root', undefined).spanContext();
    expect(fresh.traceId).to.match(/^[0-9a-f]{32}$/).and.not.match(/^0+$/);
    await tracer.close();
  });

  it('with OTEL_SDK_DISABLED passes a sender\'s traceparent on as it came, and makes none of its own', async () => {
    const config = loadConfig({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing;
    expect(config.sdkDisabled).to.equal(true);
    const tracer = createRelayTracer(config);
    expect(traceparentOf(tracer.start('child', SENDER))).to.equal(SENDER);
    const orphan = tracer.start('root', undefined);
    expect([traceparentOf(orphan), traceIdOf(orphan), logFields(orphan)]).to.deep.equal([undefined, undefined, {}]);
    const message = { key: 'k', value: Buffer.from('v'), headers: { 'x-relay': '1' } };
    expect(withTraceparent(message, orphan)).to.equal(message);
    expect(() => loadConfig({ OTEL_SDK_DISABLED: 'maybe' })).to.throw(ConfigError, /OTEL_SDK_DISABLED/);
    await tracer.close();
  });

  it('takes no parent from a malformed or all-zero traceparent', () => {
    expect(parentContext(SENDER)?.spanId).to.equal('00f067aa0ba902b7');
    for (const bad of ['', 'garbage', '00-00000000000000000000000000000000-00f067aa0ba902b7-01', '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01', `${SENDER}-${'x'.repeat(600)}`]) {
      expect(parentContext(bad), bad).to.equal(undefined);
    }
  });
});
