import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** How the checkpointer pauses the database's writer (without blocking the event loop) for a final short pass. */
export interface WriterControl {
  hold(): void;
  release(): void;
}

export interface CheckpointerOptions {
  file: string;
  /** The `synchronous` setting of the checkpointing connection: FULL makes each pass fsync as the writer does. */
  synchronous: 'NORMAL' | 'FULL';
  /** How often the WAL is copied back (default 100 ms). */
  intervalMs?: number;
  /** WAL frames above which the writer is held once, so the WAL can be fully copied back and start over (default 16,384: 64 MB). */
  restartFrames?: number;
  /** A hold never lasts longer than this, whatever the thread does (default 250 ms). */
  maxHoldMs?: number;
}

const DEFAULTS = { intervalMs: 100, restartFrames: 16_384, maxHoldMs: 250 };

// Plain CommonJS evaluated in the worker, so it runs the same under tsx and from compiled output.
// PASSIVE checkpoints copy the WAL back while appends go on. Appends keep adding frames, so a pass rarely
// catches up; the WAL only starts over once one has, so past `restartFrames` the thread asks the writer to
// hold, finishes (a few frames and the fsync) and lets go; the next append then rewinds the WAL.
// One thread serves every file of the thread that started it: an isolate costs 10-20 MB of memory.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const files = new Map();
function report(id, error) {
  parentPort.postMessage({ type: 'error', id, message: String((error && error.message) || error) });
}
function checkpoint(id, file) {
  try {
    return file.db.pragma('wal_checkpoint(PASSIVE)')[0];
  } catch (error) {
    report(id, error);
    return { busy: 1, log: 0, checkpointed: 0 };
  }
}
parentPort.on('message', (message) => {
  const file = files.get(message.id);
  if (message.type === 'add') {
    const added = { db: null, holding: false, timer: null };
    try {
      added.db = new Database(message.file, { timeout: 1000 });
      added.db.pragma('synchronous = ' + message.synchronous);
    } catch (error) {
      report(message.id, error);
      return;
    }
    added.timer = setInterval(() => {
      if (added.holding) return;
      const result = checkpoint(message.id, added);
      if (!result.busy && result.log >= message.restartFrames) {
        added.holding = true;
        parentPort.postMessage({ type: 'hold', id: message.id });
      }
    }, message.intervalMs);
    files.set(message.id, added);
  } else if (message.type === 'held' && file) {
    checkpoint(message.id, file);
    file.holding = false;
    parentPort.postMessage({ type: 'release', id: message.id });
  } else if (message.type === 'stop') {
    if (file) {
      clearInterval(file.timer);
      checkpoint(message.id, file);
      file.db.close();
      files.delete(message.id);
    }
    parentPort.postMessage({ type: 'stopped', id: message.id });
    if (message.last) parentPort.close();
  }
});
`;

type WorkerMessage =
  | { type: 'hold' | 'release' | 'stopped'; id: number }
  | { type: 'error'; id: number; message: string };

/** The checkpoint thread of this thread's files, started with the first and ended after the last. */
class CheckpointThread {
  private static current: CheckpointThread | null = null;
  private readonly files = new Map<number, Checkpointer>();
  private readonly worker: Worker;
  private nextId = 1;
  /** Files whose last pass is asked for and not yet done: the thread is referenced meanwhile. */
  private stopping = 0;

  private constructor() {
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver: createRequire(import.meta.url).resolve('better-sqlite3') } });
    this.worker.on('message', (message: WorkerMessage) => this.files.get(message.id)?.heard(message));
    this.worker.on('error', (error) => this.ended(error));
    this.worker.once('exit', () => this.ended(new Error('the checkpoint thread ended')));
    // Unreferenced while it works, so it never keeps a process alive.
    this.worker.unref();
  }

  static get(): CheckpointThread {
    CheckpointThread.current ??= new CheckpointThread();
    return CheckpointThread.current;
  }

  add(file: Checkpointer, options: Required<CheckpointerOptions>): number {
    const id = this.nextId++;
    this.files.set(id, file);
    this.worker.postMessage({ type: 'add', id, file: options.file, synchronous: options.synchronous, intervalMs: options.intervalMs, restartFrames: options.restartFrames });
    return id;
  }

  held(id: number): void {
    this.worker.postMessage({ type: 'held', id });
  }

  /** Ends the file's passes with a last one, the thread's own with its last file (a file started later gets a new thread). */
  stop(id: number): void {
    const last = this.files.size - this.stopping === 1;
    if (last && CheckpointThread.current === this) CheckpointThread.current = null;
    if (this.stopping++ === 0) this.worker.ref();
    this.worker.postMessage({ type: 'stop', id, last });
  }

  stopped(id: number): void {
    this.files.delete(id);
    if (--this.stopping === 0) this.worker.unref();
  }

  private ended(error: Error): void {
    if (CheckpointThread.current === this) CheckpointThread.current = null;
    for (const file of this.files.values()) file.threadEnded(error);
    this.files.clear();
  }
}

/**
 * Copies a SQLite database's WAL back into its file from a worker thread, so the copy and its fsync never
 * stall writes on the event loop (the writing connections run with automatic checkpoints off). The files
 * a thread opens share one such worker.
 */
export class Checkpointer {
  private stopping = false;
  private readonly id: number;
  private readonly thread = CheckpointThread.get();
  private holdTimer: NodeJS.Timeout | null = null;
  private resolveStopped!: () => void;
  private readonly stoppedOnce = new Promise<void>((resolve) => (this.resolveStopped = resolve));

  private constructor(
    private readonly options: Required<CheckpointerOptions>,
    private readonly writer: WriterControl,
    private readonly onError: (error: Error) => void,
  ) {
    this.id = this.thread.add(this, options);
    void this.stoppedOnce.then(() => this.release());
  }

  /** `onError` hears of failed passes and of the thread stopping; checkpoints then wait for the next start. */
  static start(given: CheckpointerOptions, writer: WriterControl, onError: (error: Error) => void): Checkpointer {
    return new Checkpointer({ ...DEFAULTS, ...given }, writer, onError);
  }

  /** Runs a last checkpoint and ends this file's passes. */
  async stop(): Promise<void> {
    if (!this.stopping) {
      this.stopping = true;
      this.thread.stop(this.id);
    }
    await this.stoppedOnce;
  }

  heard(message: WorkerMessage): void {
    if (message.type === 'hold') this.hold();
    else if (message.type === 'release') this.release();
    else if (message.type === 'stopped') {
      this.thread.stopped(this.id);
      this.resolveStopped();
    } else if (message.type === 'error') this.onError(new Error(`Checkpoint of ${this.options.file} failed: ${message.message}`));
  }

  threadEnded(error: Error): void {
    if (!this.stopping) this.onError(new Error(`The checkpointer of ${this.options.file} stopped: ${error.message}`, { cause: error }));
    this.resolveStopped();
  }

  private hold(): void {
    this.writer.hold();
    this.holdTimer = setTimeout(() => this.release(), this.options.maxHoldMs);
    // Sent from a message callback: no write transaction is running, as they are synchronous.
    this.thread.held(this.id);
  }

  private release(): void {
    if (this.holdTimer) clearTimeout(this.holdTimer);
    this.holdTimer = null;
    this.writer.release();
  }
}
