import type { BrokerRecord, ConsumerOptions, OutgoingMessage, TopicPartitions, TopicSpec } from '../broker.js';
import { RelayError, StorageFullError } from '../../errors/errors.js';
import { BrokerRequestError, BrokerUnavailableError, MessageTooLargeError } from '../errors.js';

/**
 * The messages between a port broker (port-broker.ts) and the thread serving the real one
 * (serve-broker.ts). One message per send and per batch: record values travel packed in one buffer.
 */

/** Values laid end to end in one fresh buffer (transferred, not copied again), with each one's length. */
export interface PackedValues {
  bytes: Uint8Array;
  lengths: number[];
}

export interface WireMessage {
  key: string | null;
  headers?: Record<string, string>;
}

export type WireRecord = Omit<BrokerRecord, 'value'>;

/** A consumer's options without its handler, which stays in the thread that asked for the consumer. */
export interface WireConsumerOptions extends Omit<ConsumerOptions, 'handleBatch' | 'topicPattern'> {
  topicPattern?: { source: string; flags: string };
}

export type WireCall =
  | { op: 'send'; topic: string; messages: WireMessage[]; values: PackedValues }
  | { op: 'ensureTopics'; specs: TopicSpec[] }
  | { op: 'listTopics' }
  | { op: 'lag'; groupId: string; topics?: string[] }
  | { op: 'start'; consumerId: number; options: WireConsumerOptions }
  | { op: 'refreshSubscription'; consumerId: number }
  | { op: 'assignment'; consumerId: number }
  | { op: 'stop'; consumerId: number };

/** Client to server. */
export type ClientMessage =
  | { kind: 'call'; id: number; call: WireCall }
  | { kind: 'pause' | 'resume'; consumerId: number; topic: string; partitions?: number[] }
  | { kind: 'batchDone'; batchId: number; outcome?: WireBatchOutcome; error?: WireError }
  /** The work a batch's handler left running (`completing`) is over. */
  | { kind: 'batchComplete'; batchId: number; error?: WireError }
  /** `RecordBatch.progress` of a batch still being handled. */
  | { kind: 'batchProgress'; batchId: number; handled: number };

/** A BatchOutcome without its completion, which cannot cross threads: `completing` says one follows. */
export interface WireBatchOutcome {
  handled: number;
  completing?: boolean;
}

/** Server to client. */
export type ServerMessage =
  | { kind: 'reply'; id: number; result?: unknown; error?: WireError }
  | {
      kind: 'batch';
      batchId: number;
      consumerId: number;
      topic: string;
      partition: number;
      records: WireRecord[];
      values: PackedValues;
      assignment: TopicPartitions[];
      /** The served batch takes `progress` reports. */
      progressive: boolean;
    };

export interface WireError {
  code?: string;
  message: string;
  /** A RelayError's own: whether trying again can help, and after how long. */
  retriable?: boolean;
  retryAfterMs?: number;
}

export function packValues(values: readonly Uint8Array[]): PackedValues {
  const lengths = values.map((value) => value.byteLength);
  const bytes = new Uint8Array(lengths.reduce((sum, length) => sum + length, 0));
  let at = 0;
  for (const value of values) {
    bytes.set(value, at);
    at += value.byteLength;
  }
  return { bytes, lengths };
}

/** Views into the one buffer: no copy per value. */
export function unpackValues({ bytes, lengths }: PackedValues): Buffer[] {
  let at = bytes.byteOffset;
  return lengths.map((length) => {
    const value = Buffer.from(bytes.buffer, at, length);
    at += length;
    return value;
  });
}

export function toWireError(error: unknown): WireError {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof RelayError) return { code: error.code, message, retriable: error.retriable, retryAfterMs: error.retryAfterMs };
  const code = (error as { code?: unknown } | null)?.code;
  return { code: typeof code === 'string' ? code : undefined, message };
}

/**
 * The broker's own errors arrive as their classes, so callers classify them by type as they would in the
 * owning thread. Any other failure that may pass (a retriable one) arrives as BrokerUnavailableError, so
 * that it holds its partition rather than being taken for a poison record (a full disk once was, so a
 * record that could not be published could be dead-lettered); the rest (a bug in the server) as a
 * BrokerRequestError.
 */
export function fromWireError(wire: WireError, topic = 'unknown'): Error {
  let error: Error;
  if (wire.code === 'STORAGE_FULL') error = new StorageFullError();
  else if (wire.code === 'MESSAGE_TOO_LARGE') error = new MessageTooLargeError(topic, undefined, undefined);
  else if (wire.code === 'BROKER_UNAVAILABLE' || wire.retriable) error = new BrokerUnavailableError(wire.message, undefined, wire.retryAfterMs);
  else error = new BrokerRequestError(wire.message);
  error.message = wire.message;
  return error;
}

export const toWireOptions = (options: ConsumerOptions): WireConsumerOptions => {
  const { handleBatch: _handler, topicPattern, ...rest } = options;
  return { ...rest, ...(topicPattern ? { topicPattern: { source: topicPattern.source, flags: topicPattern.flags } } : {}) };
};

export const fromWireOptions = (options: WireConsumerOptions, handleBatch: ConsumerOptions['handleBatch']): ConsumerOptions => {
  const { topicPattern, ...rest } = options;
  return { ...rest, handleBatch, ...(topicPattern ? { topicPattern: new RegExp(topicPattern.source, topicPattern.flags) } : {}) };
};

/** Transferable when it owns its whole buffer (packValues makes it so). */
export const transferOf = (values: PackedValues): ArrayBuffer[] =>
  values.bytes.byteOffset === 0 && values.bytes.byteLength === values.bytes.buffer.byteLength ? [values.bytes.buffer as ArrayBuffer] : [];
