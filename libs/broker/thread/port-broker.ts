import type { MessagePort } from 'node:worker_threads';
import type { Admin, BatchOutcome, Broker, Consumer, ConsumerOptions, Producer, RecordBatch, TopicLag, TopicPartitions } from '../broker.js';
import { portRequests } from '../../thread/port-requests.js';
import { BrokerUnavailableError } from '../errors.js';
import { fromWireError, packValues, toWireError, toWireOptions, transferOf, unpackValues, type ClientMessage, type ServerMessage, type WireCall } from './wire.js';

/**
 * A broker whose records live in another thread (serve-broker.ts serves the real one there): the
 * embedded log has one owner per data directory, and a pipeline thread reaches it through this.
 * `assignment()` answers from the last assignment the server sent (with each batch and each
 * start or refresh) and asks for a fresh one in the background.
 */
export function connectPortBroker(port: MessagePort): Broker {
  const handlers = new Map<number, ConsumerOptions['handleBatch']>();
  const assignments = new Map<number, TopicPartitions[]>();
  const consumers = new Set<Consumer>();
  let nextConsumerId = 0;
  let closed = false;

  const post = (message: ClientMessage, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

  const requests = portRequests(port, {
    isAnswer: (message): message is Extract<ServerMessage, { kind: 'reply' }> => (message as ServerMessage).kind === 'reply',
    closedError: () => new BrokerUnavailableError('The broker port closed'),
  });

  async function call<T>(request: WireCall, transfer: ArrayBuffer[] = []): Promise<T> {
    const reply = await requests.request((id) => ({ kind: 'call', id, call: request }) satisfies ClientMessage, transfer);
    if (reply.error) throw fromWireError(reply.error, request.op === 'send' ? request.topic : undefined);
    return reply.result as T;
  }

  function runBatch(message: Extract<ServerMessage, { kind: 'batch' }>): void {
    assignments.set(message.consumerId, message.assignment);
    const handler = handlers.get(message.consumerId);
    const values = unpackValues(message.values);
    const batch: RecordBatch = { topic: message.topic, partition: message.partition, records: message.records.map((record, index) => ({ ...record, value: values[index]! })) };
    if (message.progressive) batch.progress = (handled) => post({ kind: 'batchProgress', batchId: message.batchId, handled });
    const handled = handler ? Promise.resolve().then(() => handler(batch)) : Promise.reject(new BrokerUnavailableError('The consumer has stopped'));
    handled.then(
      (outcome: BatchOutcome | void) => {
        if (!outcome) return post({ kind: 'batchDone', batchId: message.batchId });
        const { handled, completion } = outcome;
        post({ kind: 'batchDone', batchId: message.batchId, outcome: { handled, ...(completion ? { completing: true } : {}) } });
        completion?.then(
          () => post({ kind: 'batchComplete', batchId: message.batchId }),
          (error: unknown) => post({ kind: 'batchComplete', batchId: message.batchId, error: toWireError(error) }),
        );
      },
      (error: unknown) => post({ kind: 'batchDone', batchId: message.batchId, error: toWireError(error) }),
    );
  }

  port.on('message', (message: ServerMessage) => {
    if (message.kind === 'batch') runBatch(message);
  });
  port.once('close', () => (closed = true));

  const producer: Producer = {
    send(topic, messages) {
      const values = packValues(messages.map((message) => message.value));
      return call(
        { op: 'send', topic, messages: messages.map(({ key, headers }) => ({ key, ...(headers ? { headers } : {}) })), values },
        transferOf(values),
      );
    },
  };

  const admin: Admin = {
    ensureTopics: (specs) => call({ op: 'ensureTopics', specs }),
    listTopics: () => call<string[]>({ op: 'listTopics' }),
    lag: (groupId, topics) => call<TopicLag[]>({ op: 'lag', groupId, topics }),
  };

  function consumer(options: ConsumerOptions): Consumer {
    const consumerId = nextConsumerId++;
    let refreshing = false;
    const remember = (assignment: TopicPartitions[]) => void assignments.set(consumerId, assignment);
    const made: Consumer = {
      async start() {
        handlers.set(consumerId, options.handleBatch);
        consumers.add(made);
        remember(await call<TopicPartitions[]>({ op: 'start', consumerId, options: toWireOptions(options) }));
      },
      pause: (topic, partitions) => post({ kind: 'pause', consumerId, topic, partitions }),
      resume: (topic, partitions) => post({ kind: 'resume', consumerId, topic, partitions }),
      async refreshSubscription() {
        remember(await call<TopicPartitions[]>({ op: 'refreshSubscription', consumerId }));
      },
      assignment() {
        if (!refreshing && !closed && handlers.has(consumerId)) {
          refreshing = true;
          call<TopicPartitions[]>({ op: 'assignment', consumerId })
            .then(remember, () => undefined)
            .finally(() => (refreshing = false));
        }
        return assignments.get(consumerId) ?? [];
      },
      async stop() {
        if (!handlers.has(consumerId)) return;
        // The handler keeps answering until the server's consumer has stopped: its last batch must finish.
        await call({ op: 'stop', consumerId }).catch(() => undefined);
        handlers.delete(consumerId);
        assignments.delete(consumerId);
        consumers.delete(made);
      },
    };
    return made;
  }

  return {
    producer: () => producer,
    consumer,
    admin: () => admin,
    async close() {
      if (closed) return;
      await Promise.all([...consumers].map((member) => member.stop()));
      closed = true;
      port.close();
    },
  };
}
