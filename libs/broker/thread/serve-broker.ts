import type { MessagePort } from 'node:worker_threads';
import type { BatchOutcome, Broker, Consumer, RecordBatch } from '../broker.js';
import { BrokerUnavailableError } from '../errors.js';
import { fromWireError, fromWireOptions, packValues, toWireError, transferOf, unpackValues, type ClientMessage, type ServerMessage, type WireCall } from './wire.js';

export interface ServedBroker {
  /** Stops the consumers made for the other thread and fails the batches it has not answered; `broker` stays open. */
  close(): Promise<void>;
}

/**
 * Serves `broker` to another thread over `port` (its client: port-broker.ts). The consumers live here,
 * on the real broker: each batch is posted to the client, whose handler's outcome (or error) is this
 * consumer's, so commits, pauses and retry backoff behave exactly as for a consumer of this thread.
 * `ranks`, when given, ranks the other thread's consumers in each group's deal (`ConsumerOptions.rank`).
 */
export function serveBroker(broker: Broker, port: MessagePort, ranks?: (groupId: string) => number): ServedBroker {
  const producer = broker.producer();
  const admin = broker.admin();
  const consumers = new Map<number, Consumer>();
  const waiting = new Map<number, { resolve(outcome: BatchOutcome | void): void; reject(error: Error): void; progress: RecordBatch['progress'] }>();
  /** Batches whose handler left work running in the other thread, until it says the work is over. */
  const completing = new Map<number, { resolve(): void; reject(error: Error): void }>();
  let nextBatchId = 0;
  let closed = false;

  const post = (message: ServerMessage, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

  function handleBatch(consumerId: number, batch: RecordBatch): Promise<BatchOutcome | void> {
    if (closed) return Promise.reject(new BrokerUnavailableError('The thread this consumer served has gone'));
    const batchId = nextBatchId++;
    const values = packValues(batch.records.map((record) => record.value));
    const records = batch.records.map(({ value: _value, ...record }) => record);
    const assignment = consumers.get(consumerId)?.assignment() ?? [];
    return new Promise((resolve, reject) => {
      waiting.set(batchId, { resolve, reject, progress: batch.progress });
      post({ kind: 'batch', batchId, consumerId, topic: batch.topic, partition: batch.partition, records, values, assignment, progressive: batch.progress !== undefined }, transferOf(values));
    });
  }

  async function perform(call: WireCall): Promise<unknown> {
    switch (call.op) {
      case 'send': {
        const values = unpackValues(call.values);
        return producer.send(call.topic, call.messages.map((message, index) => ({ ...message, value: values[index]! })));
      }
      case 'ensureTopics':
        return admin.ensureTopics(call.specs);
      case 'listTopics':
        return admin.listTopics();
      case 'lag':
        return admin.lag(call.groupId, call.topics);
      case 'start': {
        const options = fromWireOptions(call.options, (batch) => handleBatch(call.consumerId, batch));
        const consumer = broker.consumer(ranks ? { ...options, rank: ranks(options.groupId) } : options);
        consumers.set(call.consumerId, consumer);
        await consumer.start();
        return consumer.assignment();
      }
      case 'refreshSubscription': {
        const consumer = consumers.get(call.consumerId);
        await consumer?.refreshSubscription();
        return consumer?.assignment() ?? [];
      }
      case 'assignment':
        return consumers.get(call.consumerId)?.assignment() ?? [];
      case 'stop': {
        const consumer = consumers.get(call.consumerId);
        consumers.delete(call.consumerId);
        return consumer?.stop();
      }
    }
  }

  port.on('message', (message: ClientMessage) => {
    if (message.kind === 'call') {
      perform(message.call).then(
        (result) => post({ kind: 'reply', id: message.id, result }),
        (error: unknown) => post({ kind: 'reply', id: message.id, error: toWireError(error) }),
      );
    } else if (message.kind === 'batchDone') {
      const pending = waiting.get(message.batchId);
      waiting.delete(message.batchId);
      if (message.error) pending?.reject(fromWireError(message.error));
      else if (!message.outcome?.completing) pending?.resolve(message.outcome);
      else {
        const completion = new Promise<void>((resolve, reject) => completing.set(message.batchId, { resolve, reject }));
        pending?.resolve({ handled: message.outcome.handled, completion });
      }
    } else if (message.kind === 'batchProgress') {
      waiting.get(message.batchId)?.progress?.(message.handled);
    } else if (message.kind === 'batchComplete') {
      const work = completing.get(message.batchId);
      completing.delete(message.batchId);
      if (message.error) work?.reject(fromWireError(message.error));
      else work?.resolve();
    } else {
      const consumer = consumers.get(message.consumerId);
      if (message.kind === 'pause') consumer?.pause(message.topic, message.partitions);
      else consumer?.resume(message.topic, message.partitions);
    }
  });

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    port.close();
    const gone = new BrokerUnavailableError('The thread this consumer served has gone');
    for (const pending of [...waiting.values(), ...completing.values()]) pending.reject(gone);
    waiting.clear();
    completing.clear();
    await Promise.all([...consumers.values()].map((consumer) => consumer.stop()));
    consumers.clear();
  }
  // The client closed its end, or its thread ended.
  port.once('close', () => void close());
  return { close };
}
