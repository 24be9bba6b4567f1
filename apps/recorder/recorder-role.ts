import type { RoleBuilder } from '../../libs/roles/role.js';
import { RECORDER_GROUP } from '../../libs/pipeline/topology.js';
import { createRecorderConsumer } from './recorder-consumer.js';

/** Stores what the deliverers report: attempts, delivery and event states. */
export const buildRecorderRole: RoleBuilder = ({ broker, store, deadLetters, announce, tracer }) => {
  const consumer = createRecorderConsumer(broker, store.sql, deadLetters, tracer, async (disabled) => {
    for (const { orgId, destinationId } of disabled) await announce({ kind: 'destination', action: 'updated', orgId, id: destinationId });
  });
  return { name: 'recorder', start: () => consumer.start(), stop: () => consumer.stop(), consumerGroups: [RECORDER_GROUP] };
};
