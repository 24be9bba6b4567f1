import { expect } from 'chai';
import { metricNamesInGrafanaVariable, metricNamesInPromql, seriesNamesInExposition } from './ops-metric-names.js';

describe('metricNamesInPromql', function () {
  it('finds the series inside functions and aggregations, not the functions', function () {
    expect(metricNamesInPromql('histogram_quantile(0.99, sum by (le) (rate(relay_ingest_duration_seconds_bucket[5m])))')).to.deep.equal([
      'relay_ingest_duration_seconds_bucket',
    ]);
  });

  it('skips label names, label values, grouping labels, ranges and Grafana variables', function () {
    const expr =
      'sum by (destination, outcome) (rate(relay_delivery_attempts_total{destination=~"$destination", outcome!="up"}[$__rate_interval])) ' +
      '/ on (destination) group_left (tier) sum without (instance) (relay_retries_scheduled_total offset 5m)';
    expect(metricNamesInPromql(expr)).to.deep.equal(['relay_delivery_attempts_total', 'relay_retries_scheduled_total']);
  });

  it('finds every operand of binary and set operators, and bare selectors', function () {
    expect(metricNamesInPromql('max(a_total) > 1e3 and b_gauge == bool 0 or up{job="relay"} == 0 unless vector(0)')).to.deep.equal([
      'a_total',
      'b_gauge',
      'up',
    ]);
  });

  it('finds a misspelt metric name just the same (so the exposition check catches it)', function () {
    expect(metricNamesInPromql('rate(relay_ingest_request_total[5m])')).to.deep.equal(['relay_ingest_request_total']);
  });
});

describe('metricNamesInGrafanaVariable', function () {
  it('reads the selector of label_values(metric, label) and nothing of label_values(label)', function () {
    expect(metricNamesInGrafanaVariable('label_values(relay_delivery_attempts_total{outcome="failed"}, destination)')).to.deep.equal([
      'relay_delivery_attempts_total',
    ]);
    expect(metricNamesInGrafanaVariable('label_values(destination)')).to.deep.equal([]);
  });

  it('reads the expression of query_result(expr)', function () {
    expect(metricNamesInGrafanaVariable('query_result(topk(5, sum by (destination) (relay_deliveries_in_flight)))')).to.deep.equal([
      'relay_deliveries_in_flight',
    ]);
  });
});

describe('seriesNamesInExposition', function () {
  const exposition = [
    '# HELP a_total A counter',
    '# TYPE a_total counter',
    'a_total{x="1"} 3',
    '# HELP b_seconds A histogram',
    '# TYPE b_seconds histogram',
    '# HELP c A summary',
    '# TYPE c summary',
    '# HELP d A gauge',
    '# TYPE d gauge',
  ].join('\n');

  it('offers histograms only through their suffixed series, summaries and others by name as well', function () {
    expect([...seriesNamesInExposition(exposition)].sort()).to.deep.equal(
      ['a_total', 'b_seconds_bucket', 'b_seconds_count', 'b_seconds_sum', 'c', 'c_count', 'c_sum', 'd'].sort(),
    );
  });
});
