import { z } from 'zod';
import type { BrokerRecord, OutgoingMessage } from '../broker/broker.js';
import { CIRCUIT_STATES } from '../delivery/circuit-breakers.js';
import { jsonValue } from './record-json.js';

/** A change to configuration that running processes cache: gateways drop sources, deliverers refresh topics. */
const resourceChangeSchema = z.object({
  kind: z.enum(['source', 'destination', 'route', 'organization', 'key', 'transformation']),
  /** `rotated`: only a secret changed (caches drop it; breakers, holds and subscriptions stay). */
  action: z.enum(['created', 'updated', 'rotated', 'deleted']),
  orgId: z.string(),
  id: z.string(),
});

/** A deliverer's breaker for a destination moved to `state`: api processes running apart show it. */
const circuitChangeSchema = z.object({
  kind: z.literal('circuit'),
  destinationId: z.string(),
  state: z.enum(CIRCUIT_STATES),
});

/** What travels on relay.config: every process hears every record. */
export const configChangeSchema = z.discriminatedUnion('kind', [resourceChangeSchema, circuitChangeSchema]);

export type ResourceChange = z.infer<typeof resourceChangeSchema>;
export type CircuitChange = z.infer<typeof circuitChangeSchema>;
export type ConfigChange = z.infer<typeof configChangeSchema>;

export function encodeConfigChange(change: ConfigChange): OutgoingMessage {
  return { key: change.kind === 'circuit' ? change.destinationId : change.orgId, value: Buffer.from(JSON.stringify(change)) };
}

export function decodeConfigChange(record: BrokerRecord): ConfigChange {
  return jsonValue(record, 'config change', configChangeSchema);
}
