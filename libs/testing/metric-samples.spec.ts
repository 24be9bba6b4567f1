import { expect } from 'chai';
import { sampleSum, samplesInExposition } from './metric-samples.js';

describe('samplesInExposition / sampleSum', function () {
  const exposition = [
    '# HELP relay_delivery_attempts_total Attempts',
    '# TYPE relay_delivery_attempts_total counter',
    'relay_delivery_attempts_total{destination="dst_a",outcome="delivered"} 5',
    'relay_delivery_attempts_total{destination="dst_a",outcome="retrying"} 2',
    'relay_delivery_attempts_total{destination="dst_b",outcome="delivered"} 7',
    'relay_ingest_duration_seconds_bucket{le="+Inf",outcome="received"} 3',
    'relay_deliveries_in_flight 1',
    'odd_label{path="a \\"quoted\\" \\\\ value"} 1',
  ].join('\n');

  it('reads names, labels and values, skipping comments', function () {
    const samples = samplesInExposition(exposition);
    expect(samples).to.have.length(6);
    expect(samples[0]).to.deep.equal({ name: 'relay_delivery_attempts_total', labels: { destination: 'dst_a', outcome: 'delivered' }, value: 5 });
    expect(samples[4]).to.deep.equal({ name: 'relay_deliveries_in_flight', labels: {}, value: 1 });
    expect(samples[5]!.labels.path).to.equal('a "quoted" \\ value');
  });

  it('sums the samples whose labels include the ones asked for', function () {
    expect(sampleSum(exposition, 'relay_delivery_attempts_total')).to.equal(14);
    expect(sampleSum(exposition, 'relay_delivery_attempts_total', { destination: 'dst_a' })).to.equal(7);
    expect(sampleSum(exposition, 'relay_delivery_attempts_total', { outcome: 'delivered' })).to.equal(12);
    expect(sampleSum(exposition, 'relay_ingest_duration_seconds_bucket', { le: '+Inf' })).to.equal(3);
    expect(sampleSum(exposition, 'relay_delivery_attempts_total', { destination: 'dst_c' })).to.equal(0);
  });
});
