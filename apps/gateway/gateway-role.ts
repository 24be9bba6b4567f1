import { AdmissionGate } from '../../libs/concurrency/admission-gate.js';
import { sealedPayload } from '../../libs/payload/stored-payload.js';
import type { Role, RoleBuilder } from '../../libs/roles/role.js';
import { createDedupLedger, type DedupLedger } from '../../libs/store/dedup-ledger.js';
import { openDedupJournalFile } from '../../libs/store/dedup-journal.js';
import { createMemoryRateWindows } from '../../libs/store/memory-rate-windows.js';
import { createRateWindows } from '../../libs/store/rate-windows.js';
import { hundredthLeases, leasedRateLimits, oneHitLeases } from './source-rate-limits.js';
import { ingestRouter } from './ingest-router.js';
import { createSourceResolver } from './source-resolver.js';

export interface GatewayRole extends Role {
  /** Where ingest claims dedup keys; tests reach it to stage what a crash leaves behind. */
  dedup: DedupLedger;
}

export const isGatewayRole = (role: Role): role is GatewayRole => role.name === 'gateway' && 'dedup' in role;

/** Takes webhooks at `/ingest`: resolves and verifies the source, deduplicates, publishes to relay.ingest. */
export const buildGatewayRole: RoleBuilder<GatewayRole> = async ({ config, store, secrets, limits, metrics, logger, publish, tuning, tracer }) => {
  const resolver = createSourceResolver({
    lookup: { organizationBySlug: (slug) => store.organizations.bySlug(slug), sourceBySlug: (orgId, slug) => store.sources.findOneBy(orgId, { slug }) },
    secrets,
    limits,
  });
  // On the embedded log this process is the only gateway (the log has one owner), so rate windows are
  // counted in memory; with the SQLite store beside that log, nothing else can write its dedup journal
  // either, so claims are decided in memory and appended to a file of the journal's own (docs/decisions/0027-dedup-journal.md).
  const shared = Boolean(config.kafkaBrokers || config.databaseUrl);
  const journal = shared
    ? undefined
    : await openDedupJournalFile({
        dataDir: config.dataDir,
        store: store.sql,
        onPurgeError: (error) => logger.warn({ err: error }, 'dedup journal purge failed'),
        onBackgroundError: (error) => logger.warn({ err: error }, 'dedup journal checkpoint failed'),
      });
  if (journal) metrics.observeDedupIndex(journal.indexedKeys);
  const dedup = journal ?? createDedupLedger(store.sql);
  const routes = ingestRouter({
    deps: {
      resolveSource: resolver.get,
      dedup,
      rateLimits: config.kafkaBrokers ? leasedRateLimits(createRateWindows(store.sql), hundredthLeases) : leasedRateLimits(createMemoryRateWindows(), oneHitLeases),
      // One webhook per request: on Kafka, a busy gateway's webhooks share produce requests (KAFKA_INGEST_GATHER_MS).
      publish: (topic, message) => publish(topic, [message], { gather: true }),
      seal: (body) => sealedPayload(body, secrets).bytes,
      now: tuning.gatewayClock ?? Date.now,
      tracer,
    },
    metrics,
    admission: new AdmissionGate(config.ingestMaxInFlight),
    trustProxy: config.trustProxy,
    publicUrl: config.publicUrl,
  });
  return {
    name: 'gateway',
    dedup,
    routes: [routes],
    start: async () => {},
    stop: async () => journal?.close(),
    onConfigChange: (change) => {
      if (change.kind === 'source' || change.kind === 'organization') resolver.invalidate();
    },
  };
};
