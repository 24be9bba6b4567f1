import type { Consumer as KafkaJsConsumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import type { BrokerLogger, BrokerRecord, Consumer, ConsumerOptions, TopicPartitions } from '../broker.js';
import { backoffDelay, type BackoffOptions } from '../../time/backoff.js';
import { ConcurrencyLimit } from '../../concurrency/concurrency-limit.js';
import { PauseState } from '../pause-state.js';
import { toBrokerError, whileTopicsSettle } from './kafka-errors.js';
import type { TopicOffset } from './kafka-admin.js';
import { OffsetCommits, type PartitionOffset } from './offset-commits.js';
import { CommitOrder } from '../commit-order.js';
import type { TopicPrefix } from './topic-prefix.js';

export interface KafkaConsumerSettings {
  maxWaitTimeInMs: number;
  heartbeatIntervalMs: number;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  errorBackoff: BackoffOptions;
  /** At most one OffsetCommit per member in this time: handled offsets wait for it (see OffsetCommits). */
  commitIntervalMs: number;
  onGroupJoin?: (join: GroupJoin) => void;
}

/** One join of a consumer group, as kafkajs instruments it. */
export interface GroupJoin {
  groupId: string;
  durationMs: number;
  /** Partitions assigned to this member by the join. */
  partitions: number;
}

export interface KafkaConsumerHost {
  kafka: Kafka;
  logger: BrokerLogger;
  settings: KafkaConsumerSettings;
  /** The relay's topics, by the pipeline's names. */
  listTopics(): Promise<string[]>;
  /** The relay's topic prefix: a consumer's options and records use the pipeline's names, kafkajs the cluster's. */
  names: TopicPrefix;
  /** The partitions of `topics` the group never committed on, with their ends now (KafkaAdmin.endsWhereUncommitted). */
  endsWhereUncommitted(groupId: string, topics: string[]): Promise<TopicOffset[]>;
  /** Started consumers are tracked so closing the broker stops them. */
  track(consumer: KafkaConsumer): void;
  forget(consumer: KafkaConsumer): void;
}

/**
 * A group member on kafkajs with manual commits: offsets are committed only after the handler and the
 * work it leaves running (`CommitOrder`); they are resolved in kafkajs before that only so that fetching
 * goes on (records held to be handled with the next fetch's, `gather`, and records whose work goes on).
 * kafkajs fixes a subscription when it starts, so a changed subscription means a fresh kafkajs consumer in
 * the same group; pauses live here and are re-applied to every kafkajs consumer on each group join.
 *
 * kafkajs fetches from a broker again only once every batch of its previous fetch is handled, so one slow
 * handler (a destination whose requests hang) would hold up every partition that broker leads. A batch
 * that takes longer than a fetch wait is therefore left to finish apart from kafkajs' loop, its partition
 * paused in kafkajs until it is done (the next fetch starts at the last resolved offset); `concurrency`
 * bounds the handlers either way.
 */
export class KafkaConsumer implements Consumer {
  private readonly pauses = new PauseState();
  /** Partitions whose batch is being handled, by `topic:partition`; paused in kafkajs meanwhile. */
  private readonly busy = new Map<string, { topic: string; partition: number; done: Promise<void> }>();
  /**
   * Every batch being handled, in time or apart. A stop waits for them and commits what they handled
   * before it stops kafkajs, whose consumer drops the commits asked for once it is stopping.
   */
  private readonly inHand = new Set<Promise<void>>();
  /** Records taken in from partitions behind their end, by `topic:partition`, to be handled with the next fetch's (see `gather`). */
  private readonly held = new Map<string, { messages: KafkaMessage[]; since: number }>();
  private readonly slots: ConcurrencyLimit;
  private readonly maxBatchSize: number;
  private client: KafkaJsConsumer | null = null;
  /** The current kafkajs consumer's handled offsets, on their way to being committed. */
  private commits: OffsetCommits | null = null;
  /** The current kafkajs consumer's handled batches whose work goes on (`BatchOutcome.completion`). */
  private order: CommitOrder | null = null;
  private topics: string[] = [];
  private assigned: TopicPartitions[] = [];
  private started = false;
  private transitions: Promise<unknown> = Promise.resolve();

  private readonly options: ConsumerOptions;

  /** `options` by the pipeline's names; the group and topics are qualified with the relay's prefix here. */
  constructor(
    private readonly host: KafkaConsumerHost,
    options: ConsumerOptions,
  ) {
    this.options = { ...options, groupId: host.names.qualify(options.groupId), topics: options.topics?.map((topic) => host.names.qualify(topic)) };
    this.slots = new ConcurrencyLimit(options.concurrency ?? 1);
    this.maxBatchSize = options.maxBatchSize ?? 500;
  }

  start(): Promise<void> {
    return this.serialize(async () => {
      if (this.started) return;
      this.started = true;
      this.host.track(this);
      try {
        await this.launch(await this.resolveTopics());
      } catch (error) {
        this.started = false;
        this.host.forget(this);
        throw error;
      }
    });
  }

  stop(): Promise<void> {
    return this.serialize(async () => {
      if (!this.started) return;
      this.started = false;
      this.host.forget(this);
      await this.shutdown();
    });
  }

  refreshSubscription(): Promise<void> {
    return this.serialize(async () => {
      if (!this.started) return;
      const topics = await this.resolveTopics();
      if (sameMembers(topics, this.topics)) return;
      await this.shutdown();
      await this.launch(topics);
    });
  }

  pause(name: string, partitions?: number[]): void {
    const topic = this.host.names.qualify(name);
    this.pauses.pause(topic, partitions);
    this.applyToClient((client) => client.pause([{ topic, partitions }]));
  }

  resume(name: string, partitions?: number[]): void {
    const topic = this.host.names.qualify(name);
    this.pauses.resume(topic, partitions);
    this.applyToClient((client) => {
      client.resume([{ topic, partitions }]);
      this.pauseBusy(client);
    });
  }

  assignment(): TopicPartitions[] {
    return this.assigned.map((entry) => ({ ...entry, topic: this.host.names.local(entry.topic)! }));
  }

  private serialize<T>(step: () => Promise<T>): Promise<T> {
    const next = this.transitions.then(step, step);
    this.transitions = next.catch(() => undefined);
    return next;
  }

  private async resolveTopics(): Promise<string[]> {
    const topics = new Set(this.options.topics ?? []);
    const pattern = this.options.topicPattern;
    if (pattern) for (const name of await this.host.listTopics()) if (name.search(pattern) !== -1) topics.add(this.host.names.qualify(name));
    return [...topics].sort();
  }

  /** `progress`: what a crashed kafkajs consumer of this member had handled and not committed (OffsetCommits.progress). */
  private async launch(topics: string[], progress: PartitionOffset[] = []): Promise<void> {
    this.topics = topics;
    // Nothing to consume yet: stay out of the group until a refresh finds topics.
    if (topics.length === 0) return;
    const { kafka, settings, logger } = this.host;
    const client = kafka.consumer({
      groupId: this.options.groupId,
      maxWaitTimeInMs: settings.maxWaitTimeInMs,
      heartbeatInterval: settings.heartbeatIntervalMs,
      sessionTimeout: settings.sessionTimeoutMs,
      rebalanceTimeout: settings.rebalanceTimeoutMs,
    });
    const commits = new OffsetCommits(client, {
      progress,
      intervalMs: settings.commitIntervalMs,
      onFailure: (error, offsets) =>
        logger.warn({ err: error, groupId: this.options.groupId, offsets }, 'Kafka offset commit failed; the records handled since the last commit may be delivered again'),
    });
    const order = new CommitOrder({
      commit: (topic, partition, offset) => commits.add({ topic, partition, offset }),
      rewind: (topic, partition, offset, error) => {
        logger.warn({ err: error, groupId: this.options.groupId, topic, partition, offset }, 'Work on handled records failed; the partition is read again from the first of them');
        this.held.delete(`${topic}:${partition}`);
        if (this.client === client) this.applyToClient((current) => current.seek({ topic, partition, offset }));
      },
    });
    // New records only: where the partitions ended before the join, for the first one to seek to.
    let startsAtEnd = this.options.fromBeginning ? [] : await this.endsWhereUncommitted(topics);
    // What this member handled is committed before the group reassigns it, so its next owner starts after it.
    client.on(client.events.REBALANCING, () => void commits.flush());
    client.on(client.events.GROUP_JOIN, ({ payload }) => {
      // The join starts kafkajs at the committed offsets again, before anything held here.
      this.held.clear();
      this.assigned = Object.entries(payload.memberAssignment)
        .map(([topic, partitions]) => ({ topic, partitions: [...partitions].sort((a, b) => a - b) }))
        .filter((entry) => entry.partitions.length > 0);
      const owned = new Set(this.assigned.flatMap((entry) => entry.partitions.map((partition) => `${entry.topic}:${partition}`)));
      // Applied before the member's first fetch, which would otherwise ask for the end only then.
      for (const start of startsAtEnd) if (owned.has(`${start.topic}:${start.partition}`)) client.seek(start);
      startsAtEnd = [];
      const owns = (topic: string, partition: number) => owned.has(`${topic}:${partition}`);
      commits.assigned(owns);
      order.keepOnly(owns);
      // Kept: records handed on here whose work goes on are not read again (their commit waits for it),
      // nor records handled here whose commit failed (kafkajs restarting after a broker died).
      for (const { topic, partitions } of this.assigned) {
        for (const partition of partitions) {
          const offset = order.handedOn(topic, partition) ?? commits.uncommitted(topic, partition);
          if (offset !== undefined) client.seek({ topic, partition, offset });
        }
      }
      this.syncPauses(client);
      const partitions = this.assigned.reduce((sum, entry) => sum + entry.partitions.length, 0);
      this.host.settings.onGroupJoin?.({ groupId: this.options.groupId, durationMs: payload.duration, partitions });
    });
    client.on(client.events.CRASH, ({ payload }) => {
      if (payload.restart) return;
      logger.error({ err: payload.error, groupId: this.options.groupId }, 'Kafka consumer crashed; starting it again');
      setTimeout(() => void this.relaunchAfterCrash(client), settings.errorBackoff.maxMs).unref();
    });
    this.client = client;
    this.commits = commits;
    this.order = order;
    try {
      await client.connect();
      await whileTopicsSettle(() => client.subscribe({ topics, fromBeginning: this.options.fromBeginning ?? false }));
      await client.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: this.options.concurrency ?? 1,
        eachBatch: (payload) => this.startBatch(client, order, payload),
      });
    } catch (error) {
      this.client = null;
      this.commits = null;
      this.order = null;
      await client.disconnect().catch(() => undefined);
      throw toBrokerError(error, `Kafka consumer of group ${this.options.groupId} could not start`);
    }
  }

  /**
   * Records sent once `start` has resolved must be read (the port's "new records only"), but kafkajs asks
   * where a partition ends only at the member's first fetch, after the join. So the ends are read first
   * and sought to at the join. Failing that, kafkajs' own start stands (logged).
   */
  private async endsWhereUncommitted(topics: string[]): Promise<TopicOffset[]> {
    try {
      return await whileTopicsSettle(() => this.host.endsWhereUncommitted(this.options.groupId, topics));
    } catch (error) {
      this.host.logger.warn({ err: error, groupId: this.options.groupId }, 'Could not read where the group starts; it starts at the end its first fetch finds');
      return [];
    }
  }

  private async shutdown(): Promise<void> {
    const client = this.client;
    const commits = this.commits;
    const order = this.order;
    // Handlers see the client is no longer current, finish their chunk and stop; what they handled is
    // committed once its work is complete.
    this.client = null;
    this.commits = null;
    this.order = null;
    this.assigned = [];
    this.held.clear();
    await Promise.all(this.inHand);
    await order?.settled();
    await commits?.flush();
    await client?.disconnect();
  }

  private relaunchAfterCrash(crashed: KafkaJsConsumer): Promise<void> {
    return this.serialize(async () => {
      // Skip when stopped, or when a later kafkajs consumer already runs (null: the last attempt failed).
      if (!this.started || (this.client !== null && this.client !== crashed)) return;
      const progress = this.commits?.progress() ?? [];
      await this.shutdown();
      await this.launch(this.topics, progress);
    }).catch((error: unknown) => {
      this.host.logger.error({ err: error, groupId: this.options.groupId }, 'Kafka consumer restart failed');
      setTimeout(() => void this.relaunchAfterCrash(crashed), this.host.settings.errorBackoff.maxMs).unref();
    });
  }

  /** Brings kafkajs' pauses in line with ours (a fresh kafkajs consumer, or a pause made before it ran). */
  private syncPauses(client: KafkaJsConsumer): void {
    this.pauses.replay({
      pause: (topic, partitions) => client.pause([{ topic, partitions }]),
      resume: (topic, partitions) => client.resume([{ topic, partitions }]),
    });
    this.pauseBusy(client);
  }

  /** A resume must not let kafkajs fetch a partition whose batch is still being handled. */
  private pauseBusy(client: KafkaJsConsumer): void {
    for (const { topic, partition } of this.busy.values()) client.pause([{ topic, partitions: [partition] }]);
  }

  /**
   * kafkajs' eachBatch. Most batches are handled within one fetch wait, and kafkajs then fetches again at
   * once, as usual. A batch still running after that is left to finish on its own, its partition paused in
   * kafkajs meanwhile, so it holds up the partitions fetched with it at most one fetch wait.
   */
  private async startBatch(client: KafkaJsConsumer, order: CommitOrder, payload: EachBatchPayload): Promise<void> {
    const { topic, partition } = payload.batch;
    const key = `${topic}:${partition}`;
    // Fetched before its partition was paused: fetched again from the resolved offset after the resume.
    if (this.busy.has(key)) return;
    const messages = this.gather(payload, key);
    if (!messages) return;
    const releaseSlot = await this.slots.acquire();
    const handling = this.eachBatch(client, order, payload, messages).finally(releaseSlot);
    const settled = handling.catch(() => undefined);
    this.inHand.add(settled);
    void settled.then(() => this.inHand.delete(settled));
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      handling.then(() => true, () => true),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), this.host.settings.maxWaitTimeInMs))),
    ]);
    clearTimeout(timer);
    // In time: kafkajs sees the outcome, a rebalance or other error included, as it always did.
    if (finished) return handling;
    // On its own: a failure leaves the records it did not finish to be fetched again.
    const done = handling.catch((error: unknown) =>
      this.host.logger.warn({ err: error, groupId: this.options.groupId, topic, partition }, 'Kafka batch handled apart failed; the records it did not finish are fetched again'),
    );
    client.pause([{ topic, partitions: [partition] }]);
    this.busy.set(key, { topic, partition, done });
    void done.then(() => {
      this.busy.delete(key);
      if (this.client === client && !this.pauses.isPaused(topic, partition)) this.applyToClient((current) => current.resume([{ topic, partitions: [partition] }]));
    });
  }

  /**
   * Kafka answers a fetch with up to maxBytesPerPartition of a partition's records, however many batches
   * their producers sent; librdkafka's mock cluster answers with one produced batch. There a partition
   * behind its end was handled a produced batch at a time, a few records, however long its backlog, so a
   * hop whose handling takes a round trip or a commit could not catch up. A fetched batch smaller than
   * maxBatchSize from a partition with more records already written is therefore held here, its offsets
   * resolved in kafkajs so that the next fetch goes on after it, and handled together with what the next
   * fetches bring: once maxBatchSize is in hand, the partition's end is reached, or one fetch wait has
   * passed since the first was held. Returns the records to handle now, or nothing when they are held.
   * Held records are neither handled nor committed: a member that loses the partition (rebalance, stop,
   * crash) leaves them to be fetched again from the committed offset, and `eachBatch` sends kafkajs back
   * to the first of them before it handles any.
   */
  private gather(payload: EachBatchPayload, key: string): KafkaMessage[] | undefined {
    const { batch } = payload;
    const held = this.held.get(key);
    this.held.delete(key);
    // A fetch from before the held records (kafkajs sent back to an earlier offset) brings them again.
    const follows = held !== undefined && BigInt(batch.messages[0]!.offset) > BigInt(held.messages.at(-1)!.offset);
    const messages = follows ? held.messages.concat(batch.messages) : batch.messages;
    const since = follows ? held.since : Date.now();
    const behind = BigInt(batch.offsetLag()) > 0n;
    if (!behind || messages.length >= this.maxBatchSize || Date.now() - since >= this.host.settings.maxWaitTimeInMs) return messages;
    payload.resolveOffset(messages.at(-1)!.offset);
    this.held.set(key, { messages, since });
    return undefined;
  }

  private isAssigned(topic: string, partition: number): boolean {
    return this.assigned.some((entry) => entry.topic === topic && entry.partitions.includes(partition));
  }

  private applyToClient(change: (client: KafkaJsConsumer) => void): void {
    if (!this.client) return;
    try {
      change(this.client);
    } catch {
      // Not running yet (kafkajs refuses before `run`); the next group join applies the state.
    }
  }

  /** Still this member's to handle: not stopped, not handed over in a rebalance, no seek pending. */
  private owns(client: KafkaJsConsumer, { batch, isRunning, isStale }: EachBatchPayload): boolean {
    return this.client === client && this.isAssigned(batch.topic, batch.partition) && isRunning() && !isStale();
  }

  /**
   * Handles a partition's records (the batch's, after any held before it) chunk by chunk, handing each
   * handled prefix to the commits (in order behind work still going on). kafkajs' own loop keeps the session alive.
   */
  private async eachBatch(client: KafkaJsConsumer, order: CommitOrder, payload: EachBatchPayload, records: KafkaMessage[]): Promise<void> {
    const { batch, resolveOffset } = payload;
    const { topic, partition } = batch;
    let messages = records;
    // Held records were resolved to let kafkajs fetch on; until handled they are to be fetched again.
    if (messages !== batch.messages) resolveOffset((BigInt(messages[0]!.offset) - 1n).toString());
    let failures = 0;
    while (messages.length > 0 && this.owns(client, payload)) {
      // Unresolved records are fetched again from the last resolved offset once the partition is resumed.
      if (this.pauses.isPaused(topic, partition)) {
        this.syncPauses(client);
        return;
      }
      const chunk = messages.slice(0, this.maxBatchSize);
      let handled: number;
      let completion: Promise<void> | undefined;
      try {
        const local = this.host.names.local(topic)!;
        const outcome = await this.options.handleBatch({ topic: local, partition, records: chunk.map((message) => toRecord(local, partition, message)) });
        handled = outcome ? Math.max(0, Math.min(chunk.length, Math.floor(outcome.handled))) : chunk.length;
        completion = outcome?.completion;
      } catch (error) {
        failures += 1;
        this.host.logger.warn(
          { err: error, groupId: this.options.groupId, topic, partition, offset: chunk[0]!.offset },
          'Batch handler failed; the batch will be delivered again after a back-off',
        );
        await this.backOff(failures, client, payload);
        continue;
      }
      // Sent back by a rewind meanwhile: these records are read again, and their commit is not this batch's to give.
      if (payload.isStale()) return;
      if (handled > 0) {
        const last = chunk[handled - 1]!.offset;
        resolveOffset(last);
        order.handled(topic, partition, chunk[0]!.offset, (BigInt(last) + 1n).toString(), completion);
        messages = messages.slice(handled);
        failures = 0;
      } else if (!this.pauses.isPaused(topic, partition)) {
        failures += 1;
        await this.backOff(failures, client, payload);
      }
    }
  }

  /** Waits before a retry; cut short by stop or a rebalance. */
  private async backOff(failures: number, client: KafkaJsConsumer, payload: EachBatchPayload): Promise<void> {
    const deadline = Date.now() + backoffDelay(this.host.settings.errorBackoff, failures);
    while (Date.now() < deadline && this.owns(client, payload)) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(50, deadline - Date.now())));
    }
  }
}

function toRecord(topic: string, partition: number, message: KafkaMessage): BrokerRecord {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    if (value === undefined) continue;
    const last = Array.isArray(value) ? value.at(-1) : value;
    if (last !== undefined) headers[name] = last.toString();
  }
  return {
    topic,
    partition,
    offset: message.offset,
    key: message.key === null ? null : message.key.toString('utf8'),
    value: message.value ?? Buffer.alloc(0),
    headers,
    timestamp: Number(message.timestamp),
  };
}

function sameMembers(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((name, i) => name === b[i]);
}
