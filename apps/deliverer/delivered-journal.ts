import fs from 'node:fs';
import path from 'node:path';
import { attemptRecordSchema, type AttemptRecord } from '../../libs/pipeline/attempt-record.js';
import type { DeliveryJob } from '../../libs/pipeline/delivery-job.js';
import { OwnerLock } from '../../libs/storage/owner-lock.js';

/** Lines a journal file holds before it becomes the old one: far more than are ever answered and not yet published. */
export const JOURNAL_FILE_ATTEMPTS = 8192;
/** Every journal file's name starts so: they sit in the data directory, files among its files (0600). */
const PREFIX = 'delivered-attempts.';
const CURRENT = '.jsonl';
const OLD = '.old.jsonl';

/**
 * A deliverer's delivered attempts, written to a file of its own the moment each answer arrives, before
 * the attempt is published. A kill between the two no longer costs a second request: the next deliverer
 * on the same data directory reads the journals there when it starts, and publishes the attempt written
 * for a job it reads again instead of sending the job (decision 0103). The publish can lag the answer
 * by tens of milliseconds (another hop, a busy thread); the write is one synchronous call, which a
 * SIGKILL of the process cannot undo. An entry that is missing or torn costs what it cost before, a
 * second request; nothing here can lose a delivery.
 */
export interface DeliveredJournal {
  /** Writes a delivered attempt of this deliverer's. */
  write(attempt: AttemptRecord): void;
  /** The delivered attempt a deliverer before this one wrote for the job's delivery, of the job's attempt or a later one. */
  earlier(job: Pick<DeliveryJob, 'deliveryId' | 'attemptNumber'>): AttemptRecord | undefined;
  close(): void;
}

/** The attempts of a journal's text; a line that is torn (a kill during its write) or unreadable is left out. */
function attemptsOf(text: string): AttemptRecord[] {
  return text.split('\n').flatMap((line) => {
    if (!line) return [];
    try {
      const parsed = attemptRecordSchema.safeParse(JSON.parse(line));
      return parsed.success ? [parsed.data] : [];
    } catch {
      return [];
    }
  });
}

/** Another deliverer's journal file, which it may have just renamed to its old one. */
function textOf(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  }
}

/** This deliverer's own file up to its last whole line: a torn last line is cut off, so the next write starts a line of its own. */
function wholeLinesOf(file: string): string {
  if (!fs.existsSync(file)) return '';
  const bytes = fs.readFileSync(file);
  const end = bytes.lastIndexOf(0x0a) + 1;
  if (end < bytes.length) fs.truncateSync(file, end);
  return bytes.subarray(0, end).toString('utf8');
}

export interface DeliveredJournalOptions {
  /** Lines a file holds before it becomes the old one. */
  fileAttempts?: number;
  /** Told of the first write that fails (a full disk) after one that did not: the attempts go on meanwhile, unjournaled. */
  onWriteFailed?: (error: unknown) => void;
}

/**
 * Opens the journal `name` (one per deliverer that runs at once: its thread's name) in `dir`, the
 * data directory, after reading every journal there as what deliverers before this one delivered.
 */
export function openDeliveredJournal(dir: string, name: string, options: DeliveredJournalOptions = {}): DeliveredJournal {
  const { fileAttempts = JOURNAL_FILE_ATTEMPTS, onWriteFailed } = options;
  const currentName = `${PREFIX}${name}${CURRENT}`;
  const current = path.join(dir, currentName);
  const own = wholeLinesOf(current);
  let lines = own.split('\n').length - 1;
  const others = fs.readdirSync(dir).filter((entry) => entry !== currentName && entry.startsWith(PREFIX) && entry.endsWith(CURRENT));
  const earlier = new Map<string, AttemptRecord>();
  for (const text of [own, ...others.map((file) => textOf(path.join(dir, file)))]) {
    for (const attempt of attemptsOf(text)) {
      if ((earlier.get(attempt.deliveryId)?.attemptNumber ?? 0) < attempt.attemptNumber) earlier.set(attempt.deliveryId, attempt);
    }
  }
  let fd = fs.openSync(current, 'a', 0o600);
  /** The last write failed or was cut short: the next line starts on a line of its own. */
  let failing = false;

  /** The current file becomes the old one; a rename done by a rotation whose open failed is not done again. */
  function rotate(): void {
    if (fs.existsSync(current)) fs.renameSync(current, path.join(dir, `${PREFIX}${name}${OLD}`));
    const next = fs.openSync(current, 'a', 0o600);
    fs.closeSync(fd);
    fd = next;
    lines = 0;
  }

  return {
    write(attempt) {
      try {
        // The old file's attempts were published long ago.
        if (lines >= fileAttempts) rotate();
        const line = Buffer.from(`${failing ? '\n' : ''}${JSON.stringify(attempt)}\n`);
        const written = fs.writeSync(fd, line);
        lines += 1;
        if (written < line.length) throw new Error(`a journal line was cut short at ${written} of ${line.length} bytes`);
        failing = false;
      } catch (error) {
        // An attempt not journaled costs a second request only if a kill comes before its publish; failing it would cost one every time.
        if (!failing) onWriteFailed?.(error);
        failing = true;
      }
    },
    earlier(job) {
      const attempt = earlier.get(job.deliveryId);
      return attempt && attempt.attemptNumber >= job.attemptNumber ? attempt : undefined;
    },
    close: () => fs.closeSync(fd),
  };
}

/**
 * The journal `name` in `dir` for this deliverer alone (`openDeliveredJournal` under a lock), or undefined
 * while another holds it: Kafka's processes may share a data directory, and two writing one file would tear
 * each other's lines and rotations. Going without costs what no journal costs, a second request after a kill.
 */
export function claimDeliveredJournal(dir: string, name: string, options: DeliveredJournalOptions = {}): DeliveredJournal | undefined {
  const lock = OwnerLock.tryAcquire(path.join(dir, `${PREFIX}${name}`));
  if (!lock) return undefined;
  try {
    const journal = openDeliveredJournal(dir, name, options);
    return {
      ...journal,
      close() {
        journal.close();
        lock.release();
      },
    };
  } catch (error) {
    lock.release();
    throw error;
  }
}
