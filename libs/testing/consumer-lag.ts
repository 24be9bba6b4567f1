import type { Admin } from '../broker/broker.js';
import { DELIVERER_GROUP, destinationTopic, RETRY_GROUP, RETRY_TIER_TOPICS } from '../pipeline/topology.js';

/** Whether `groupId` has consumed (and committed) every record of `topics`: lag 0 on each partition. */
export async function consumedAll(admin: Pick<Admin, 'lag'>, groupId: string, topics: readonly string[]): Promise<boolean> {
  return (await admin.lag(groupId, [...topics])).every((partition) => partition.lag === 0);
}

/**
 * No job of the destination left to read: none in its topic for the deliverers, none waiting in a retry
 * tier that could still be sent.
 */
export async function destinationSettled(admin: Pick<Admin, 'lag'>, destinationId: string): Promise<boolean> {
  return (await consumedAll(admin, DELIVERER_GROUP, [destinationTopic(destinationId)])) && consumedAll(admin, RETRY_GROUP, RETRY_TIER_TOPICS);
}
