/**
 * The broker port: a log with Kafka semantics (topics, partitions, keys, headers, consumer groups,
 * committed offsets). The pipeline depends on this file only; adapters live in `embedded/` and `kafka/`.
 */

export interface OutgoingMessage {
  /** Records with the same key go to the same partition and keep their order; null spreads round-robin. */
  key: string | null;
  value: Buffer;
  headers?: Record<string, string>;
}

export interface BrokerRecord {
  topic: string;
  partition: number;
  /** Decimal string, as Kafka offsets exceed 2^53 in principle. */
  offset: string;
  key: string | null;
  value: Buffer;
  headers: Record<string, string>;
  /** Milliseconds since the epoch at which the broker accepted the record. */
  timestamp: number;
}

/** Consecutive records of one partition, oldest first. */
export interface RecordBatch {
  topic: string;
  partition: number;
  records: BrokerRecord[];
  /**
   * Tells the adapter, while the handler still runs, that the first `handled` records are handled and
   * complete: their offsets are committed then, so a crash reads only the rest again. The handler's
   * outcome never counts fewer, and when it throws, the batch is delivered again from the first record
   * not reported. Offered by the embedded log; absent on Kafka, whose commits wait for the handler.
   */
  progress?(handled: number): void;
}

/**
 * What a handler did with a batch. Returning nothing means all of it. `handled: n` means only the first n
 * records: their offsets are committed and the rest are delivered again (after `resume` when the handler
 * paused the partition, else after a short back-off).
 */
export interface BatchOutcome {
  handled: number;
  /**
   * Work on the handled records that goes on after the handler returned (a deliverer's requests). The
   * partition is read on meanwhile, but its committed offset stays below these records until this
   * resolves, so a crash reads them again (at least once); when it rejects, the partition is read again
   * from the first of them.
   */
  completion?: Promise<void>;
}

export interface Producer {
  /** Resolves only once every message is durable (embedded: committed to disk; Kafka: acks from all in-sync replicas). */
  send(topic: string, messages: OutgoingMessage[], options?: SendOptions): Promise<void>;
}

export interface SendOptions {
  /**
   * The send may wait a little to share a request with the next ones: for a publisher that sends one
   * record at a time (the gateway, one webhook per HTTP request). The Kafka adapter then sends at most one
   * such request per gather interval while busy, and at once after a quiet spell; the embedded log commits
   * what meets in one turn together anyway and ignores it.
   */
  gather?: boolean;
}

export interface ConsumerOptions {
  groupId: string;
  /** Topics to consume; missing ones are created with the broker's default partition count. */
  topics?: string[];
  /** Also consume every existing topic whose name matches; see `Consumer.refreshSubscription`. */
  topicPattern?: RegExp;
  /**
   * Called with batches of one partition at a time. Offsets are committed only after it resolves (or as it
   * reports them done: `RecordBatch.progress`); when it throws, the error is logged and the same batch (past
   * what it reported) is delivered again after a back-off (at least once).
   */
  handleBatch(batch: RecordBatch): Promise<void | BatchOutcome>;
  /** Upper bound on records per batch (default 500). */
  maxBatchSize?: number;
  /** Where a group without a committed offset starts: the oldest record (true) or new records only (false, default). */
  fromBeginning?: boolean;
  /** How many partitions may be handled at the same time (default 1). */
  concurrency?: number;
  /**
   * Where this member stands among its group's members on the embedded log, which deals each topic's
   * partitions round-robin over them in rank order (members without a rank after those with one, in
   * joining order): who gets which partition then does not depend on which member joined first. Kafka
   * ignores it: there the group's protocol assigns.
   */
  rank?: number;
}

export interface TopicPartitions {
  topic: string;
  partitions: number[];
}

export interface Consumer {
  /** Joins the group; resolves once this member has taken part in the first assignment. */
  start(): Promise<void>;
  /** Stops fetching the topic (all partitions) or only the given partitions, until `resume`. */
  pause(topic: string, partitions?: number[]): void;
  resume(topic: string, partitions?: number[]): void;
  /** Re-evaluates `topicPattern` against the current topics: new matches join, vanished topics leave. */
  refreshSubscription(): Promise<void>;
  /** Partitions currently assigned to this member. */
  assignment(): TopicPartitions[];
  /** Lets in-flight batches finish and commit, then leaves the group. */
  stop(): Promise<void>;
}

export interface TopicLag {
  groupId: string;
  topic: string;
  partition: number;
  /** Next offset the group will read; "-1" when the group never committed on this partition. */
  committed: string;
  /** Offset the next appended record will get. */
  end: string;
  /** Records appended but not yet committed by the group. */
  lag: number;
}

export interface TopicSpec {
  topic: string;
  partitions: number;
}

export interface Admin {
  /** Creates the topics that do not exist yet; existing topics keep their partition count. */
  ensureTopics(topics: TopicSpec[]): Promise<void>;
  listTopics(): Promise<string[]>;
  /** Lag per partition of `topics`, by default of every topic on which the group has committed offsets. */
  lag(groupId: string, topics?: string[]): Promise<TopicLag[]>;
}

export interface Broker {
  /** The broker's one producer; every call returns the same instance. */
  producer(): Producer;
  consumer(options: ConsumerOptions): Consumer;
  admin(): Admin;
  /** Stops every consumer (letting in-flight batches commit), flushes pending sends, releases resources. */
  close(): Promise<void>;
}

/** The logging the adapters need; a pino logger fits. */
export interface BrokerLogger {
  warn(context: Record<string, unknown>, message: string): void;
  error(context: Record<string, unknown>, message: string): void;
}
