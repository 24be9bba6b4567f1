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
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { timeout: 1000 });
db.pragma('synchronous = ' + workerData.synchronous);
let holding = false;
function checkpoint() {
  try {
    return db.pragma('wal_checkpoint(PASSIVE)')[0];
  } catch (error) {
    parentPort.postMessage({ type: 'error', message: String((error && error.message) || error) });
    return { busy: 1, log: 0, checkpointed: 0 };
  }
}
const timer = setInterval(() => {
  if (holding) return;
  const result = checkpoint();
  if (!result.busy && result.log >= workerData.restartFrames) {
    holding = true;
    parentPort.postMessage({ type: 'hold' });
  }
}, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message === 'held') {
    checkpoint();
    holding = false;
    parentPort.postMessage({ type: 'release' });
  } else if (message === 'stop') {
    clearInterval(timer);
    checkpoint();
    db.close();
    parentPort.close();
  }
});
`;

type WorkerMessage = { type: 'hold' } | { type: 'release' } | { type: 'error'; message: string };

/**
 * Copies a SQLite database's WAL back into its file from a worker thread, so the copy and its fsync never
 * stall writes on the event loop (the writing connections run with automatic checkpoints off).
 */
export class Checkpointer {
  private readonly exited: Promise<void>;
  private holdTimer: NodeJS.Timeout | null = null;

  private constructor(
    private readonly worker: Worker,
    private readonly writer: WriterControl,
    private readonly maxHoldMs: number,
  ) {
    this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
    void this.exited.then(() => this.release());
  }

  /** `onError` hears of failed passes and of the thread stopping; checkpoints then wait for the next start. */
  static start(given: CheckpointerOptions, writer: WriterControl, onError: (error: Error) => void): Checkpointer {
    const options = { ...DEFAULTS, ...given };
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        driver: createRequire(import.meta.url).resolve('better-sqlite3'),
        file: options.file,
        synchronous: options.synchronous,
        intervalMs: options.intervalMs,
        restartFrames: options.restartFrames,
      },
    });
    const checkpointer = new Checkpointer(worker, writer, options.maxHoldMs);
    worker.on('message', (message: WorkerMessage) => {
      if (message.type === 'hold') checkpointer.hold();
      else if (message.type === 'release') checkpointer.release();
      else onError(new Error(`Checkpoint of ${options.file} failed: ${message.message}`));
    });
    worker.on('error', (error) => onError(new Error(`The checkpointer of ${options.file} stopped: ${error.message}`, { cause: error })));
    // Unreferenced while it works, so it never keeps a process alive.
    worker.unref();
    return checkpointer;
  }

  /** Runs a last checkpoint and ends the thread. */
  async stop(): Promise<void> {
    this.worker.ref();
    this.worker.postMessage('stop');
    await this.exited;
  }

  private hold(): void {
    this.writer.hold();
    this.holdTimer = setTimeout(() => this.release(), this.maxHoldMs);
    // Sent from a message callback: no write transaction is running, as they are synchronous.
    this.worker.postMessage('held');
  }

  private release(): void {
    if (this.holdTimer) clearTimeout(this.holdTimer);
    this.holdTimer = null;
    this.writer.release();
  }
}
