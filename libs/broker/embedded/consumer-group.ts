import type { TopicPartitions } from '../broker.js';
import type { StoredTopic } from './log-store.js';
import { PartitionWorker, type GroupMember, type WorkerContext } from './partition-worker.js';

/** Ranked members first, by rank; the others after them, in joining order (the sort is stable). */
const byRank = (a: GroupMember, b: GroupMember) => (a.rank ?? Infinity) - (b.rank ?? Infinity) || 0;

/**
 * The members of one consumer group in this process and who owns which partition. Partitions of a topic
 * are dealt round-robin over the members subscribed to it, in rank order (`ConsumerOptions.rank`), else
 * in joining order; every join, leave or subscription change deals again.
 */
export class ConsumerGroup {
  private readonly members: GroupMember[] = [];
  /** Workers are kept once created, so a partition's position and in-flight batch survive rebalances. */
  private readonly workers = new Map<StoredTopic, PartitionWorker[]>();

  constructor(private readonly context: WorkerContext) {}

  get size(): number {
    return this.members.length;
  }

  join(member: GroupMember): void {
    if (!this.members.includes(member)) this.members.push(member);
    this.rebalance();
  }

  /** Removes the member, hands its partitions over and waits for its in-flight batches to commit. */
  async leave(member: GroupMember): Promise<void> {
    const index = this.members.indexOf(member);
    if (index === -1) return;
    this.members.splice(index, 1);
    const inFlight = [...this.workers.values()].flat().map((worker) => worker.idle(member));
    this.rebalance();
    await Promise.all(inFlight);
  }

  rebalance(): void {
    const subscribers = new Map<StoredTopic, GroupMember[]>();
    for (const member of [...this.members].sort(byRank)) {
      for (const topic of member.subscription()) {
        const list = subscribers.get(topic);
        if (list) list.push(member);
        else subscribers.set(topic, [member]);
      }
    }
    for (const [topic, workers] of this.workers) {
      if (!subscribers.has(topic)) for (const worker of workers) worker.assign(null);
    }
    for (const [topic, members] of subscribers) {
      this.workersOf(topic).forEach((worker, partition) => worker.assign(members[partition % members.length]!));
    }
  }

  /** Wakes the workers of the given partitions (all of the topic's when omitted). */
  wake(topic: StoredTopic, partitions?: Iterable<number>): void {
    const workers = this.workers.get(topic);
    if (!workers) return;
    if (partitions === undefined) for (const worker of workers) worker.wake();
    else for (const partition of partitions) workers[partition]?.wake();
  }

  assignmentOf(member: GroupMember): TopicPartitions[] {
    const assignment: TopicPartitions[] = [];
    for (const [topic, workers] of this.workers) {
      const partitions = workers.filter((worker) => worker.assignee === member).map((worker) => worker.partition);
      if (partitions.length > 0) assignment.push({ topic: topic.name, partitions });
    }
    return assignment;
  }

  private workersOf(topic: StoredTopic): PartitionWorker[] {
    let workers = this.workers.get(topic);
    if (!workers) {
      workers = Array.from({ length: topic.partitions }, (_, partition) => new PartitionWorker(this.context, topic, partition));
      this.workers.set(topic, workers);
    }
    return workers;
  }
}
