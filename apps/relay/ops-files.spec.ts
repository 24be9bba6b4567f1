import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { loadConfig } from '../../libs/config/config.js';
import { DEFAULT_PLAN_LIMITS, largestPayloadBytes } from '../../libs/config/plan-limits.js';
import { createLogger } from '../../libs/logging/logger.js';
import { createRelayMetrics } from '../../libs/metrics/relay-metrics.js';
import { metricNamesInGrafanaVariable, metricNamesInPromql, seriesNamesInExposition } from '../../libs/testing/ops-metric-names.js';
import { startRelay, type RunningRelay } from './relay.js';
import { TEST_RELAY_ENV } from '../../libs/testing/test-relay-env.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
// Docker Compose resolves `<<` merge keys (YAML 1.1), which the YAML 1.2 core schema leaves alone.
const readYaml = (file: string): any => parseYaml(read(file), { merge: true });

/** Series Prometheus makes itself for every scraped target; no process exposes them. */
const SCRAPE_SERIES = new Set(['up']);

interface Query {
  where: string;
  expr: string;
  metrics: string[];
}

function dashboardQueries(dashboard: any): Query[] {
  const panels: any[] = dashboard.panels.flatMap((panel: any) => [panel, ...(panel.panels ?? [])]);
  const fromPanels = panels.flatMap((panel) =>
    (panel.targets ?? []).map((target: any) => ({ where: `panel "${panel.title}"`, expr: target.expr, metrics: metricNamesInPromql(target.expr) })),
  );
  const fromVariables = (dashboard.templating?.list ?? [])
    .filter((variable: any) => variable.type === 'query')
    .map((variable: any) => {
      const expr = typeof variable.query === 'string' ? variable.query : variable.query.query;
      return { where: `variable $${variable.name}`, expr, metrics: metricNamesInGrafanaVariable(expr) };
    });
  return [...fromPanels, ...fromVariables];
}

function alertQueries(rules: any): (Query & { alert: string })[] {
  return rules.groups.flatMap((group: any) =>
    group.rules.map((rule: any) => ({ alert: rule.alert ?? rule.record, where: `rule ${rule.alert ?? rule.record}`, expr: rule.expr, metrics: metricNamesInPromql(rule.expr) })),
  );
}

function expectAllExposed(queries: Query[], exposed: Set<string>): void {
  const missing = queries.flatMap((query) =>
    query.metrics.filter((name) => !exposed.has(name) && !SCRAPE_SERIES.has(name)).map((name) => `${query.where}: ${name}`),
  );
  expect(missing, 'metrics queried but not exposed by the relay').to.deep.equal([]);
}

/** The series a metric family is read through: histograms by their suffixes. */
function seriesOf(family: { name: string; type: unknown }): string[] {
  return family.type === 'histogram' ? ['_bucket', '_sum', '_count'].map((suffix) => family.name + suffix) : [family.name];
}

describe('ops files (Prometheus, Grafana, docker compose) against a running relay', function () {
  let dataDir: string;
  let relay: RunningRelay;
  let exposed: Set<string>;
  const dashboard = JSON.parse(read('ops/grafana/dashboards/webhook-relay.json'));
  const alerts = readYaml('ops/prometheus/alerts.yml');
  const compose = readYaml('docker-compose.yml');

  before(async function () {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-ops-'));
    relay = await startRelay(loadConfig({ ...TEST_RELAY_ENV, PORT: '0', HOST: '127.0.0.1', RELAY_DATA_DIR: dataDir }), { logger: createLogger({ level: 'silent' }) });
    const response = await fetch(`${relay.metricsUrl}/metrics`);
    expect(response.status).to.equal(200);
    exposed = seriesNamesInExposition(await response.text());
  });

  after(async function () {
    await relay?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('reads the exposition of the running relay (relay metrics and process metrics)', function () {
    expect(exposed).to.include.keys('relay_ingest_requests_total', 'relay_ingest_duration_seconds_bucket', 'relay_process_cpu_seconds_total');
    expect(exposed.has('relay_ingest_duration_seconds'), 'a histogram is not a series of its own').to.equal(false);
  });

  describe('the Grafana dashboard', function () {
    it('is a dashboard with a uid, a title and panels that each query something', function () {
      expect(dashboard).to.include({ uid: 'webhook-relay', title: 'Webhook Relay' });
      const panels = dashboard.panels.filter((panel: any) => panel.type !== 'row');
      expect(panels.length).to.be.at.least(10);
      for (const panel of panels) expect(panel.targets, `panel "${panel.title}"`).to.be.an('array').that.is.not.empty;
      expect(new Set(dashboard.panels.map((panel: any) => panel.id)).size).to.equal(dashboard.panels.length);
    });

    it('queries the datasource that Grafana provisioning creates', function () {
      const provisioned = readYaml('ops/grafana/provisioning/datasources/prometheus.yml').datasources[0];
      const used = dashboardQueries(dashboard).length;
      const panels = dashboard.panels.filter((panel: any) => panel.type !== 'row');
      const uids = new Set(panels.flatMap((panel: any) => [panel.datasource.uid, ...panel.targets.map((target: any) => target.datasource.uid)]));
      expect(used).to.be.above(0);
      expect([...uids]).to.deep.equal([provisioned.uid]);
      expect(provisioned.url).to.equal('http://prometheus:9090');
      expect(compose.services).to.have.property('prometheus');
    });

    it('queries only metrics the relay exposes (histograms through _bucket, _sum, _count)', function () {
      const queries = dashboardQueries(dashboard);
      for (const query of queries) expect(query.metrics, `${query.where} reads no metric: ${query.expr}`).to.not.be.empty;
      expectAllExposed(queries, exposed);
    });

    it('shows every metric the relay defines', async function () {
      const families = await createRelayMetrics({ defaultMetrics: false }).registry.getMetricsAsJSON();
      const queried = new Set(dashboardQueries(dashboard).flatMap((query) => query.metrics));
      const unshown = families.filter((family) => !seriesOf(family).some((series) => queried.has(series))).map((family) => family.name);
      expect(unshown, 'relay metrics without a dashboard panel').to.deep.equal([]);
    });
  });

  describe('the Prometheus alert rules', function () {
    const rules = alertQueries(alerts);

    it('query only metrics the relay exposes, or that Prometheus makes per target', function () {
      expectAllExposed(rules, exposed);
    });

    it('watch delivery failures, open circuits, gone destinations, consumer lag, dead letters, ingest 5xx and ingest latency', function () {
      const metricsOf = (alert: string) => rules.find((rule) => rule.alert === alert)?.metrics;
      expect(metricsOf('RelayDeliveryFailureRateHigh')).to.deep.equal(['relay_delivery_attempts_total']);
      expect(metricsOf('RelayCircuitOpen')).to.deep.equal(['relay_circuit_state']);
      expect(metricsOf('RelayDestinationGone')).to.deep.equal(['relay_destinations_gone_total']);
      expect(metricsOf('RelayConsumerLagGrowing')).to.deep.equal(['relay_consumer_lag']);
      expect(metricsOf('RelayDeadLetters')).to.deep.equal(['relay_dead_letters_total']);
      expect(metricsOf('RelayIngestServerErrors')).to.deep.equal(['relay_ingest_requests_total']);
      expect(metricsOf('RelayIngestLatencyHigh')).to.deep.equal(['relay_ingest_duration_seconds_bucket']);
    });

    it('each carry a severity and a summary', function () {
      for (const group of alerts.groups) {
        for (const rule of group.rules) {
          expect(rule.labels?.severity, rule.alert).to.be.oneOf(['warning', 'critical']);
          expect(rule.annotations?.summary, rule.alert).to.be.a('string').and.not.equal('');
        }
      }
    });
  });

  describe('docker-compose.yml', function () {
    const relayServices = Object.entries<any>(compose.services).filter(([, service]) => service.command?.includes('dist/apps/relay/main.js'));
    const roleOf = (service: any) => service.command[service.command.indexOf('--role') + 1];

    it('runs every role as its own service, the gateway twice', function () {
      const roles = relayServices.map(([, service]) => roleOf(service)).sort();
      expect(roles).to.deep.equal(['api', 'deliverer', 'gateway', 'gateway', 'recorder', 'router']);
    });

    it('gives every relay service Kafka, PostgreSQL and a shared encryption key', function () {
      for (const [name, service] of relayServices) {
        expect(service.environment, name).to.include.keys('DATABASE_URL', 'KAFKA_BROKERS', 'RELAY_ENCRYPTION_KEY');
        expect(service.depends_on, name).to.include.keys('kafka', 'migrate');
      }
    });

    it('has Prometheus scrape each relay service on its metrics port, open to the compose network, with its role as a label', function () {
      const prometheus = readYaml('ops/prometheus/prometheus.yml');
      const scraped = new Map<string, string>();
      for (const job of prometheus.scrape_configs.filter((job: any) => job.job_name === 'relay')) {
        for (const group of job.static_configs) for (const target of group.targets) scraped.set(target, group.labels.role);
      }
      const expected = new Map(relayServices.map(([name, service]) => [`${name}:9464`, roleOf(service)]));
      for (const [name, service] of relayServices) expect(service.environment, name).to.include({ METRICS_HOST: '0.0.0.0' }).and.not.have.key('METRICS_PORT');
      expect(Object.fromEntries(scraped)).to.deep.equal(Object.fromEntries(expected));
    });

    it('mounts the Prometheus and Grafana files where they are read', function () {
      const provider = readYaml('ops/grafana/provisioning/dashboards/relay.yml').providers[0];
      expect(compose.services.grafana.volumes).to.include.members([
        './ops/grafana/provisioning:/etc/grafana/provisioning:ro',
        `./ops/grafana/dashboards:${provider.options.path}:ro`,
      ]);
      expect(compose.services.prometheus.volumes).to.include('./ops/prometheus:/etc/prometheus:ro');
      expect(readYaml('ops/prometheus/prometheus.yml').rule_files).to.deep.equal(['alerts.yml']);
    });

    it("sends every relay service's spans to the collector, which hands them to Jaeger, where the console links", function () {
      const collector = readYaml('ops/otel/collector.yaml');
      const [collectorHost, collectorPort] = new URL(compose['x-relay-env'].OTEL_EXPORTER_OTLP_ENDPOINT).host.split(':');
      expect(compose.services).to.have.property(collectorHost!);
      expect(collector.receivers.otlp.protocols.http.endpoint).to.equal(`0.0.0.0:${collectorPort}`);
      expect(compose.services[collectorHost!].volumes[0]).to.match(new RegExp(`^./ops/otel/collector.yaml:${compose.services[collectorHost!].command[0].split('=')[1]}:ro$`));
      const [jaegerHost] = collector.exporters[collector.service.pipelines.traces.exporters[0]].endpoint.split(':');
      expect(compose.services[jaegerHost].environment.COLLECTOR_OTLP_ENABLED).to.equal('true');
      expect(compose.services[jaegerHost].ports).to.include('16686:16686');
      for (const [name, service] of relayServices) expect(service.environment.RELAY_TRACE_URL_TEMPLATE, name).to.contain('localhost:16686/trace/{traceId}');
    });

    it('lets Kafka take the largest plan payload at the default limits, with the same limit as the topic script', function () {
      const brokerLimit = Number(compose.services.kafka.environment.KAFKA_MESSAGE_MAX_BYTES);
      expect(brokerLimit).to.be.above(largestPayloadBytes(DEFAULT_PLAN_LIMITS) + 64 * 1024);
      expect(Number(compose.services.kafka.environment.KAFKA_REPLICA_FETCH_MAX_BYTES)).to.be.at.least(brokerLimit);
      expect(read('ops/kafka/apply-topic-config.sh')).to.match(new RegExp(`^MAX_MESSAGE_BYTES=${brokerLimit}\\b`, 'm'));
    });
  });
});
