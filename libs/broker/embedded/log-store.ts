import Database from 'better-sqlite3';
import type { BrokerRecord } from '../broker.js';
import { BrokerUnavailableError } from '../errors.js';
import { PartitionTail } from './partition-tail.js';

export type FsyncMode = 'normal' | 'full';

export interface StoredTopic {
  readonly id: number;
  readonly name: string;
  readonly partitions: number;
  /** Offset the next record of each partition gets; mutated only by `LogStore.write`. */
  readonly ends: number[];
}

export interface PendingAppend {
  topic: StoredTopic;
  partition: number;
  key: string | null;
  headers: Readonly<Record<string, string>>;
  value: Buffer;
  timestamp: number;
}

export interface PendingCommit {
  groupId: string;
  topic: StoredTopic;
  partition: number;
  /** Next offset the group will read. */
  offset: number;
}

export type AppendedPartitions = Map<StoredTopic, Set<number>>;

export interface CommittedOffset {
  topic: StoredTopic;
  partition: number;
  offset: number;
}

const SCHEMA_VERSION = 1;

// A partition's next offset is MAX(msg_offset) + 1; `partition_ends` remembers it (written by retention, in the
// same transaction as its deletes) for partitions retention may have emptied. Appends never touch it: one
// page less per transaction in the WAL.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS topics (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  partitions INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS partition_ends (
  topic_id INTEGER NOT NULL,
  partition INTEGER NOT NULL,
  next_offset INTEGER NOT NULL,
  PRIMARY KEY (topic_id, partition)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS records (
  id INTEGER PRIMARY KEY,
  topic_id INTEGER NOT NULL,
  partition INTEGER NOT NULL,
  msg_offset INTEGER NOT NULL,
  timestamp INTEGER NOT NULL,
  key TEXT,
  headers TEXT,
  value BLOB NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS records_by_position ON records (topic_id, partition, msg_offset);
CREATE TABLE IF NOT EXISTS group_offsets (
  group_id TEXT NOT NULL,
  topic_id INTEGER NOT NULL,
  partition INTEGER NOT NULL,
  next_offset INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (group_id, topic_id, partition)
) WITHOUT ROWID;
`;

type RecordRow = [offset: number, timestamp: number, key: string | null, headers: string | null, value: Buffer];

/**
 * The embedded log's SQLite file: topics, records, partition ends and group offsets. Synchronous; the
 * group commit on top decides when to write. Partition ends live in memory, so only one process may
 * write the file (see `OwnerLock`).
 */
export class LogStore {
  private readonly topicsByName = new Map<string, StoredTopic>();
  private readonly topicsById = new Map<number, StoredTopic>();
  /** Per topic, each partition's newest records, which its consumers read back within a turn or two. */
  private readonly tails = new Map<StoredTopic, PartitionTail[]>();
  private readonly statements;
  private readonly writeTransaction;

  private constructor(private readonly db: Database.Database) {
    this.statements = {
      insertTopic: db.prepare('INSERT INTO topics (name, partitions, created_at) VALUES (?, ?, ?)'),
      insertRecord: db.prepare(
        'INSERT INTO records (topic_id, partition, msg_offset, timestamp, key, headers, value) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      upsertEnd: db.prepare(
        'INSERT INTO partition_ends (topic_id, partition, next_offset) VALUES (?, ?, ?) ' +
          'ON CONFLICT (topic_id, partition) DO UPDATE SET next_offset = excluded.next_offset',
      ),
      upsertCommit: db.prepare(
        'INSERT INTO group_offsets (group_id, topic_id, partition, next_offset, updated_at) VALUES (?, ?, ?, ?, ?) ' +
          'ON CONFLICT (group_id, topic_id, partition) DO UPDATE SET next_offset = excluded.next_offset, updated_at = excluded.updated_at',
      ),
      readRecords: db
        .prepare(
          'SELECT msg_offset, timestamp, key, headers, value FROM records ' +
            'WHERE topic_id = ? AND partition = ? AND msg_offset >= ? ORDER BY msg_offset LIMIT ?',
        )
        .raw(true),
      committed: db
        .prepare('SELECT next_offset FROM group_offsets WHERE group_id = ? AND topic_id = ? AND partition = ?')
        .pluck(true),
      committedByGroup: db.prepare('SELECT topic_id, partition, next_offset FROM group_offsets WHERE group_id = ?').raw(true),
      minCommitted: db
        .prepare('SELECT topic_id, partition, MIN(next_offset) FROM group_offsets GROUP BY topic_id, partition')
        .raw(true),
      lowOffset: db
        .prepare('SELECT msg_offset FROM records WHERE topic_id = ? AND partition = ? ORDER BY msg_offset LIMIT 1')
        .pluck(true),
      timestampFrom: db
        .prepare(
          'SELECT timestamp FROM records WHERE topic_id = ? AND partition = ? AND msg_offset >= ? ORDER BY msg_offset LIMIT 1',
        )
        .pluck(true),
      expireGroups: db.prepare(
        'DELETE FROM group_offsets WHERE group_id IN ' +
          '(SELECT group_id FROM group_offsets GROUP BY group_id HAVING MAX(updated_at) < ?) ' +
          'AND group_id NOT IN (SELECT value FROM json_each(?))',
      ),
      deleteRange: db.prepare('DELETE FROM records WHERE topic_id = ? AND partition = ? AND msg_offset >= ? AND msg_offset < ?'),
      maxOffset: db.prepare('SELECT MAX(msg_offset) FROM records WHERE topic_id = ? AND partition = ?').pluck(true),
    };
    this.writeTransaction = db.transaction((appends: PendingAppend[], commits: PendingCommit[]) => {
      const touched = new Map<StoredTopic, Set<number>>();
      for (const append of appends) {
        const { topic, partition } = append;
        const offset = topic.ends[partition]!;
        this.statements.insertRecord.run(topic.id, partition, offset, append.timestamp, append.key, headersText(append.headers), append.value);
        topic.ends[partition] = offset + 1;
        let partitions = touched.get(topic);
        if (!partitions) touched.set(topic, (partitions = new Set()));
        partitions.add(partition);
      }
      const now = Date.now();
      for (const commit of commits) {
        this.statements.upsertCommit.run(commit.groupId, commit.topic.id, commit.partition, commit.offset, now);
      }
      return touched;
    });
    this.loadTopics();
  }

  /**
   * Opens the file in WAL mode. Checkpoints are left to a `Checkpointer` thread so that copying the WAL back
   * (and its fsync) never stalls appends on the event loop; `OwnerLock` keeps other processes out.
   */
  static open(file: string, fsync: FsyncMode): LogStore {
    const db = new Database(file, { timeout: 5_000 });
    try {
      db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${fsync === 'full' ? 'FULL' : 'NORMAL'}`);
      db.pragma('wal_autocheckpoint = 0');
      db.pragma('journal_size_limit = 67108864');
      const version = db.pragma('user_version', { simple: true }) as number;
      if (version > SCHEMA_VERSION) throw new BrokerUnavailableError(`${file} was written by a newer version (schema ${version})`);
      db.exec(SCHEMA);
      db.pragma(`user_version = ${SCHEMA_VERSION}`);
      return new LogStore(db);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  topic(name: string): StoredTopic | undefined {
    return this.topicsByName.get(name);
  }

  topics(): StoredTopic[] {
    return [...this.topicsByName.values()];
  }

  createTopic(name: string, partitions: number): StoredTopic {
    const { lastInsertRowid } = this.statements.insertTopic.run(name, partitions, Date.now());
    const topic: StoredTopic = { id: Number(lastInsertRowid), name, partitions, ends: new Array<number>(partitions).fill(0) };
    this.remember(topic);
    return topic;
  }

  /**
   * Appends and commits in one transaction; assigns offsets (and rolls them back with the transaction).
   * Returns the partitions that received records.
   */
  write(appends: PendingAppend[], commits: PendingCommit[]): AppendedPartitions {
    const saved = new Map<StoredTopic, number[]>();
    for (const { topic } of appends) if (!saved.has(topic)) saved.set(topic, topic.ends.slice());
    let appended: AppendedPartitions;
    try {
      appended = this.writeTransaction(appends, commits);
    } catch (error) {
      for (const [topic, ends] of saved) ends.forEach((end, partition) => (topic.ends[partition] = end));
      throw error;
    }
    // Offsets follow on from the ends before, in the order of `appends`, as the transaction gave them.
    for (const { topic, partition, timestamp, key, headers, value } of appends) {
      const offset = saved.get(topic)![partition]!++;
      this.tailsOf(topic)[partition]!.append({ offset, timestamp, key, headers, value });
    }
    return appended;
  }

  /** Records from `from` on, at most `maxRecords`, stopping after the one that reaches `maxBytes` of values. */
  read(topic: StoredTopic, partition: number, from: number, maxRecords: number, maxBytes: number): BrokerRecord[] {
    return this.tailsOf(topic)[partition]!.read(topic.name, partition, from, maxRecords, maxBytes) ?? this.readFile(topic, partition, from, maxRecords, maxBytes);
  }

  private readFile(topic: StoredTopic, partition: number, from: number, maxRecords: number, maxBytes: number): BrokerRecord[] {
    const records: BrokerRecord[] = [];
    let bytes = 0;
    for (const row of this.statements.readRecords.iterate(topic.id, partition, from, maxRecords) as Iterable<RecordRow>) {
      const [offset, timestamp, key, headers, value] = row;
      records.push({
        topic: topic.name,
        partition,
        offset: String(offset),
        key,
        value,
        headers: headers === null ? {} : (JSON.parse(headers) as Record<string, string>),
        timestamp,
      });
      bytes += value.length;
      if (bytes >= maxBytes) break;
    }
    return records;
  }

  committed(groupId: string, topic: StoredTopic, partition: number): number | undefined {
    return this.statements.committed.get(groupId, topic.id, partition) as number | undefined;
  }

  committedByGroup(groupId: string): CommittedOffset[] {
    return this.toCommitted(this.statements.committedByGroup.all(groupId) as [number, number, number][]);
  }

  /** Per partition, the lowest offset any group will still read. */
  minCommitted(): CommittedOffset[] {
    return this.toCommitted(this.statements.minCommitted.all() as [number, number, number][]);
  }

  lowOffset(topic: StoredTopic, partition: number): number | undefined {
    return this.statements.lowOffset.get(topic.id, partition) as number | undefined;
  }

  /** Timestamp of the first record at or after `offset`. */
  timestampFrom(topic: StoredTopic, partition: number, offset: number): number | undefined {
    return this.statements.timestampFrom.get(topic.id, partition, offset) as number | undefined;
  }

  /** Forgets the offsets of groups whose last commit is older than `before`, except the `active` ones. */
  expireGroups(before: number, active: string[]): number {
    return this.statements.expireGroups.run(before, JSON.stringify(active)).changes;
  }

  /** Deletes [from, to) of a partition, remembering its end first in case this empties it. */
  deleteRange(topic: StoredTopic, partition: number, from: number, to: number): number {
    const deleted = this.db.transaction(() => {
      this.statements.upsertEnd.run(topic.id, partition, topic.ends[partition]);
      return this.statements.deleteRange.run(topic.id, partition, from, to).changes;
    })();
    this.tailsOf(topic)[partition]!.dropBefore(to);
    return deleted;
  }

  /** Bytes of the database file in use (free pages excluded). */
  usedBytes(): number {
    const pages = this.db.pragma('page_count', { simple: true }) as number;
    const free = this.db.pragma('freelist_count', { simple: true }) as number;
    const pageSize = this.db.pragma('page_size', { simple: true }) as number;
    return (pages - free) * pageSize;
  }

  close(): void {
    this.db.close();
  }

  private toCommitted(rows: [number, number, number][]): CommittedOffset[] {
    const result: CommittedOffset[] = [];
    for (const [topicId, partition, offset] of rows) {
      const topic = this.topicsById.get(topicId);
      if (topic) result.push({ topic, partition, offset });
    }
    return result;
  }

  private loadTopics(): void {
    const topics = this.db.prepare('SELECT id, name, partitions FROM topics').all() as { id: number; name: string; partitions: number }[];
    const remembered = this.db.prepare('SELECT next_offset FROM partition_ends WHERE topic_id = ? AND partition = ?').pluck(true);
    for (const { id, name, partitions } of topics) {
      const ends = Array.from({ length: partitions }, (_, partition) => {
        const max = this.statements.maxOffset.get(id, partition) as number | null;
        const end = remembered.get(id, partition) as number | undefined;
        return Math.max(max === null ? 0 : max + 1, end ?? 0);
      });
      this.remember({ id, name, partitions, ends });
    }
  }

  private tailsOf(topic: StoredTopic): PartitionTail[] {
    let tails = this.tails.get(topic);
    if (!tails) this.tails.set(topic, (tails = Array.from({ length: topic.partitions }, () => new PartitionTail())));
    return tails;
  }

  private remember(topic: StoredTopic): void {
    this.topicsByName.set(topic.name, topic);
    this.topicsById.set(topic.id, topic);
  }
}

/** Headers as the file keeps them: JSON text, null when there are none. */
const headersText = (headers: Readonly<Record<string, string>>): string | null => (Object.keys(headers).length > 0 ? JSON.stringify(headers) : null);
