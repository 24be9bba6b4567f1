import type { BrokerRecord, OutgoingMessage } from '../broker/broker.js';
import type { CircuitState } from '../delivery/circuit-breakers.js';
import { MalformedRecordError } from './malformed-record-error.js';
import { jsonValue } from './record-json.js';

/** A change to configuration that running processes cache: gateways drop sources, deliverers refresh topics. */
export interface ResourceChange {
  kind: 'source' | 'destination' | 'route' | 'organization' | 'key';
  /** `rotated`: only a secret changed (caches drop it; breakers, holds and subscriptions stay). */
  action: 'created' | 'updated' | 'rotated' | 'deleted';
  orgId: string;
  id: string;
}

/** A deliverer's breaker for a destination moved to `state`: api processes running apart show it. */
export interface CircuitChange {
  kind: 'circuit';
  destinationId: string;
  state: CircuitState;
}

/** What travels on relay.config: every process hears every record. */
export type ConfigChange = ResourceChange | CircuitChange;

const CIRCUIT_STATES: readonly string[] = ['closed', 'open', 'half_open'] satisfies CircuitState[];

export function encodeConfigChange(change: ConfigChange): OutgoingMessage {
  return { key: change.kind === 'circuit' ? change.destinationId : change.orgId, value: Buffer.from(JSON.stringify(change)) };
}

export function decodeConfigChange(record: BrokerRecord): ConfigChange {
  const { kind } = jsonValue<{ kind: string }>(record, 'config change', { kind: 'string' });
  if (kind !== 'circuit') return jsonValue<ResourceChange>(record, 'config change', { kind: 'string', action: 'string', orgId: 'string', id: 'string' });
  const change = jsonValue<CircuitChange>(record, 'circuit change', { kind: 'string', destinationId: 'string', state: 'string' });
  if (!CIRCUIT_STATES.includes(change.state)) throw new MalformedRecordError(record, `circuit change.state is not one of ${CIRCUIT_STATES.join(', ')}`);
  return change;
}
