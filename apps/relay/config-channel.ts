import { randomBytes } from 'node:crypto';
import type { Broker, BrokerRecord, OutgoingMessage } from '../../libs/broker/broker.js';
import { decodeConfigChange, encodeConfigChange, type ConfigChange } from '../../libs/pipeline/config-change.js';
import { deadLetterPoison, type DeadLetters } from '../../libs/pipeline/dead-letter.js';
import { handleIsolatingPoison } from '../../libs/pipeline/poison-records.js';
import { CONFIG_TOPIC } from '../../libs/pipeline/topology.js';

/** Which process announced a change: that process applied it already and skips it when it hears it back. */
const ORIGIN_HEADER = 'relay-config-origin';

export interface ConfigChannelOptions {
  broker: Broker;
  publish(topic: string, messages: OutgoingMessage[]): Promise<void>;
  deadLetters: DeadLetters;
  /** A group of this process's own: every process hears every change. */
  groupId: string;
}

export interface ConfigChannel {
  /** Applies the change in this process at once (its next request sees it), then tells every other process. */
  announce(change: ConfigChange): Promise<void>;
  /** Called with every change, made here or heard from another process, once each. */
  listen(listener: (change: ConfigChange) => void): void;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** relay.config: how processes tell each other that configuration they cache changed. */
export function createConfigChannel(options: ConfigChannelOptions): ConfigChannel {
  const origin = randomBytes(8).toString('hex');
  const listeners: ((change: ConfigChange) => void)[] = [];
  const apply = (change: ConfigChange) => listeners.forEach((listener) => listener(change));
  const applyAll = async (records: BrokerRecord[]) => {
    for (const record of records) if (record.headers[ORIGIN_HEADER] !== origin) apply(decodeConfigChange(record));
  };
  const consumer = options.broker.consumer({
    groupId: options.groupId,
    topics: [CONFIG_TOPIC],
    handleBatch: (batch) =>
      handleIsolatingPoison(batch.records, {
        all: applyAll,
        one: (record) => applyAll([record]),
        deadLetter: (record, error) => deadLetterPoison(options.deadLetters, record, error),
      }),
  });
  return {
    async announce(change) {
      apply(change);
      const message = encodeConfigChange(change);
      await options.publish(CONFIG_TOPIC, [{ ...message, headers: { ...message.headers, [ORIGIN_HEADER]: origin } }]);
    },
    listen: (listener) => void listeners.push(listener),
    start: () => consumer.start(),
    stop: () => consumer.stop(),
  };
}
