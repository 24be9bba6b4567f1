import { getHeapStatistics } from 'node:v8';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * Every metric the relay exposes, `relay_` prefixed, in one registry per process (per thread, summed into
 * the main thread's `/metrics`: `thread` names the one this is, `main` by default).
 */
export function createRelayMetrics(options: { defaultMetrics?: boolean; thread?: string } = {}) {
  const thread = options.thread ?? 'main';
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'relay_' });
  const registers = [registry];
  let dedupIndexSize = () => 0;
  let acceptQueue: { port: number; length: (port: number) => number | undefined } | undefined;
  // Read at each scrape: a thread's heap, where the process's RSS alone cannot say which thread holds what.
  new Gauge({
    name: 'relay_thread_heap_used_bytes',
    help: "V8 heap in use by each thread of the process (the process's RSS also holds native memory and heap not yet returned)",
    labelNames: ['thread'],
    registers,
    collect() {
      this.set({ thread }, getHeapStatistics().used_heap_size);
    },
  });
  // Read at each scrape from what the observe functions below were given; nothing else sets them.
  new Gauge({
    name: 'relay_dedup_index_keys',
    help: "Dedup key fingerprints the embedded gateway's journal holds in memory (about 50 bytes each)",
    registers,
    collect() {
      this.set(dedupIndexSize());
    },
  });
  // Labelled, so that a process not listening (or not on Linux) shows no series rather than a 0.
  new Gauge({
    name: 'relay_http_accept_queue_connections',
    help: 'Connections the kernel completed on the listening socket at `port` that this process has not accepted yet (Linux)',
    labelNames: ['port'],
    registers,
    collect() {
      if (!acceptQueue) return;
      const length = acceptQueue.length(acceptQueue.port);
      if (length !== undefined) this.set({ port: String(acceptQueue.port) }, length);
    },
  });
  return {
    registry,
    ingestRequests: new Counter({
      name: 'relay_ingest_requests_total',
      help: 'Ingest requests by outcome (received, duplicate, or the error code)',
      labelNames: ['outcome'] as const,
      registers,
    }),
    ingestShed: new Counter({
      name: 'relay_ingest_shed_total',
      help: 'Ingest requests answered 503 because durability could not be promised, by reason (the error code: STORE_UNAVAILABLE, STORAGE_FULL, BROKER_UNAVAILABLE, OVERLOADED)',
      labelNames: ['reason'] as const,
      registers,
    }),
    ingestDuration: new Histogram({
      name: 'relay_ingest_duration_seconds',
      help: 'Ingest request handling time, from first byte to answer',
      labelNames: ['outcome'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    brokerPublishDuration: new Histogram({
      name: 'relay_broker_publish_duration_seconds',
      help: 'Time for the broker to acknowledge a publish durably',
      labelNames: ['topic'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    consumerGroupJoins: new Histogram({
      name: 'relay_consumer_group_join_seconds',
      help: 'Time each join of a consumer group took (every rebalance on Kafka), per group',
      labelNames: ['group'] as const,
      buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers,
    }),
    consumerRecordWait: new Histogram({
      name: 'relay_consumer_record_wait_seconds',
      help: "Per batch handed to a consumer group's handler: how long its oldest record was in the log first (the queue in front of that hop, the broker's fetch wait included)",
      labelNames: ['group'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    consumerBatchDuration: new Histogram({
      name: 'relay_consumer_batch_duration_seconds',
      help: "Time a consumer group's handler took over each batch (the hop's own work, its store writes and publishes included)",
      labelNames: ['group'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    consumerLag: new Gauge({
      name: 'relay_consumer_lag',
      help: 'Records appended but not yet committed, per consumer group and topic',
      labelNames: ['group', 'topic'] as const,
      registers,
    }),
    deliveryAttempts: new Counter({
      name: 'relay_delivery_attempts_total',
      help: 'Delivery attempts by destination and the delivery status they led to (delivered, retrying, failed)',
      labelNames: ['destination', 'outcome'] as const,
      registers,
    }),
    journaledAttempts: new Counter({
      name: 'relay_journaled_attempts_published_total',
      help: 'Delivered attempts an earlier process wrote to its journal but was stopped before publishing, published by the next one instead of sending their jobs again',
      registers,
    }),
    deliveryAttemptDuration: new Histogram({
      name: 'relay_delivery_attempt_duration_seconds',
      help: 'Time from sending a delivery request to its complete answer or failure, per destination',
      labelNames: ['destination'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    transformationDuration: new Histogram({
      name: 'relay_transformation_duration_seconds',
      help: 'Time a transformation took per call, compilation included, per transformation',
      labelNames: ['transformation'] as const,
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    }),
    transformationFailures: new Counter({
      name: 'relay_transformation_failures_total',
      help: 'Transformation calls that threw, ran out of time or memory, or returned a result of the wrong shape or size, per transformation',
      labelNames: ['transformation'] as const,
      registers,
    }),
    retriesScheduled: new Counter({
      name: 'relay_retries_scheduled_total',
      help: 'Failed attempts scheduled for another try, by the retry tier they wait in',
      labelNames: ['tier'] as const,
      registers,
    }),
    deadLetters: new Counter({
      name: 'relay_dead_letters_total',
      help: 'Records published to relay.dead, by reason (retries_exhausted, destination_gone, destination_deleted, malformed_record, poison_record)',
      labelNames: ['reason'] as const,
      registers,
    }),
    destinationsGone: new Counter({
      name: 'relay_destinations_gone_total',
      help: 'Destinations disabled because they answered 410 Gone, per destination',
      labelNames: ['destination'] as const,
      registers,
    }),
    circuitState: new Gauge({
      name: 'relay_circuit_state',
      help: 'Circuit breaker state per destination: 1 on the current state (closed, open, half_open), 0 on the others',
      labelNames: ['destination', 'state'] as const,
      registers,
    }),
    deliveriesInFlight: new Gauge({
      name: 'relay_deliveries_in_flight',
      help: 'Delivery HTTP requests in flight in this process',
      registers,
    }),
    notifications: new Counter({
      name: 'relay_notifications_total',
      help: 'Notifications sent to channels, by outcome: delivered, retried (failed, tried again later), failed (given up)',
      labelNames: ['outcome'] as const,
      registers,
    }),
    issuesOpen: new Gauge({
      name: 'relay_issues_open',
      help: "Open issues by kind, over every organization, as the API process's notifier last read them (each such process reports the same figure)",
      labelNames: ['kind'] as const,
      registers,
    }),
    searchIndexLag: new Gauge({
      name: 'relay_search_index_lag_events',
      help: 'Stored events whose payload the search index does not hold yet (searches still find them, by a slower scan)',
      registers,
    }),
    /** Where `relay_dedup_index_keys` reads from once the gateway's dedup journal is open. */
    observeDedupIndex(size: () => number): void {
      dedupIndexSize = size;
    },
    /** How `relay_http_accept_queue_connections` is read once the process listens on `port`. */
    observeAcceptQueue(port: number, length: (port: number) => number | undefined): void {
      acceptQueue = { port, length };
    },
  };
}

export type RelayMetrics = ReturnType<typeof createRelayMetrics>;
