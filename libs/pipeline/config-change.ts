import type { BrokerRecord, OutgoingMessage } from '../broker/broker.js';
import { jsonValue } from './record-json.js';

/** A change to configuration that running processes cache: gateways drop sources, deliverers refresh topics. */
export interface ConfigChange {
  kind: 'source' | 'destination' | 'route' | 'organization';
  action: 'created' | 'updated' | 'deleted';
  orgId: string;
  id: string;
}

export function encodeConfigChange(change: ConfigChange): OutgoingMessage {
  return { key: change.orgId, value: Buffer.from(JSON.stringify(change)) };
}

export function decodeConfigChange(record: BrokerRecord): ConfigChange {
  return jsonValue<ConfigChange>(record, 'config change');
}
