import type { Broker } from '../../libs/broker/broker.js';
import { createEventRouter, type RouterDeps } from './route-events.js';
import { INGEST_TOPIC, ROUTER_GROUP } from '../../libs/pipeline/topology.js';


/** The router role: `relay.ingest` to stored events and per-destination jobs. */
export function createRouterConsumer(broker: Broker, deps: RouterDeps) {
  const router = createEventRouter(deps);
  return broker.consumer({
    groupId: ROUTER_GROUP,
    topics: [INGEST_TOPIC],
    // A new group must not skip events acknowledged before it first ran.
    fromBeginning: true,
    maxBatchSize: 500,
    concurrency: 4,
    handleBatch: (batch) => router.routeBatch(batch),
  });
}
