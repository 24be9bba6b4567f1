import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { portRequests, type PortRequests } from '../thread/port-requests.js';
import { threadEntry } from '../thread/thread-entry.js';
import type { SandboxOptions, TransformCall, TransformError, TransformOutcome } from './transform-sandbox.js';

/** A call and whose time it spends: the router's organization, whose budget a batch holds. */
export interface BudgetedCall {
  call: TransformCall;
  budgetKey: string;
}

/** Milliseconds of calls each budget key may still spend; a key not named has no bound. */
export type CallBudgets = Record<string, number>;

export type SandboxRequest = { id: number; kind: 'run'; calls: BudgetedCall[]; budgets: CallBudgets } | { id: number; kind: 'check'; code: string };
/** Each call's outcome in order, null for one not run because its key had spent its budget. */
export type SandboxAnswer = { id: number; outcomes: (TransformOutcome | null)[] } | { id: number; checked: TransformError | null };

/** What the router, replays and the API run transformations with. */
export interface Sandbox {
  run(call: TransformCall): Promise<TransformOutcome>;
  /**
   * Runs `calls` in order on the thread, one message for all of them: a call whose key has spent its
   * budget (the calls' own time, counted as they run) is not run, and its outcome is null.
   */
  runAll(calls: BudgetedCall[], budgets: CallBudgets): Promise<(TransformOutcome | null)[]>;
  /** Null when `code` compiles and defines `transform`, else why not. */
  check(code: string): Promise<TransformError | null>;
  dispose(): Promise<void>;
}

/**
 * How long past its time limit a call may take before its thread is ended. QuickJS polls its interrupt
 * handler every few thousand operations, and some operations cost a millisecond each (building a string
 * of 100 KB), so a string bomb ran 3 to 9 s against a limit of 100 ms; QuickJS also leaves strings out of
 * its memory limit. Ending the thread stops any of it. The grace covers compiling code the thread has not
 * seen (a fresh runtime and its prelude, up to a few hundred ms on a loaded machine), which the engine's
 * limit leaves out.
 */
export const HARD_STOP_GRACE_MS = 1_000;

/**
 * How long a call may wait for the thread to take it up. The thread is idle when a call is sent (one at
 * a time), so only a thread that can no longer run waits this long.
 */
const TAKE_UP_LIMIT_MS = 30_000;

interface Thread {
  worker: Worker;
  requests: PortRequests<SandboxAnswer>;
  /**
   * Written by the thread: [0] when it began the call in hand (Date.now()), 0 while it has no request
   * in hand; [1] that call's index in its request.
   */
  busySince: Float64Array;
}

/** What ended a thread: the index of the call in hand in its request, or `NOT_TAKEN_UP`. */
interface HardStop {
  stoppedAt: number;
}

/** The call index a thread shows while it has no request in hand. */
export const NOT_TAKEN_UP = -1;

/**
 * The sandbox (transform-sandbox.ts) on a thread of its own (sandbox-thread.ts), one request at a time,
 * each of one call or of many (a round of the router's: one message each way instead of one a call). A
 * call that has not answered by its time limit plus `HARD_STOP_GRACE_MS` ends the thread and fails as a
 * time-out; the next request starts a new thread (and compiles its code anew).
 */
export async function createThreadedSandbox(options: SandboxOptions): Promise<Sandbox> {
  let thread: Promise<Thread> | undefined;
  let queue: Promise<unknown> = Promise.resolve();

  function started(): Promise<Thread> {
    if (thread) return thread;
    const starting = startThread(options);
    // A thread that failed to start is tried again at the next call.
    starting.catch(() => {
      if (thread === starting) thread = undefined;
    });
    thread = starting;
    return starting;
  }

  async function ask(request: (id: number) => SandboxRequest, limitMs: number): Promise<SandboxAnswer | HardStop> {
    const starting = started();
    const current = await starting;
    let timer: NodeJS.Timeout | undefined;
    const sentAt = Date.now();
    // The hard stop counts the thread's own time on the call, read when the timer fires: a timer that
    // fires late (this thread busy) or a call not yet taken up (the message on its way) ends nothing early.
    const stopped = new Promise<HardStop>((resolve) => {
      const watch = (waitMs: number) => {
        timer = setTimeout(() => {
          const since = current.busySince[0]!;
          const now = Date.now();
          const left = since > 0 ? limitMs - (now - since) : TAKE_UP_LIMIT_MS - (now - sentAt);
          if (left > 0) return watch(since > 0 ? left : Math.min(left, limitMs));
          if (thread === starting) thread = undefined;
          void current.worker.terminate();
          resolve({ stoppedAt: current.busySince[1]! });
        }, waitMs);
      };
      watch(limitMs);
    });
    try {
      return await Promise.race([current.requests.request(request), stopped]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** One at a time: a call's hard stop then measures its own time, not the wait behind another's. */
  function inTurn<T>(work: () => Promise<T>): Promise<T> {
    const result = queue.then(work);
    queue = result.catch(() => undefined);
    return result;
  }

  const limitMs = options.timeoutMs + HARD_STOP_GRACE_MS;
  const timedOut = (durationMs: number): TransformOutcome => ({ result: null, error: { name: 'TimeoutError', message: `The transformation ran longer than ${options.timeoutMs} ms` }, logs: [], durationMs });

  /**
   * A call that ended the thread times out; the calls around it, whose outcomes ended with the thread,
   * run again on the next one, its key's budget less the time it took. A request the thread never took
   * up times out whole.
   */
  async function runInTurn(calls: BudgetedCall[], budgets: CallBudgets): Promise<(TransformOutcome | null)[]> {
    if (calls.length === 0) return [];
    const answer = await ask((id) => ({ id, kind: 'run', calls, budgets }), limitMs);
    if ('checked' in answer) throw new TypeError('The transformation thread answered a run with a check');
    if ('outcomes' in answer) return answer.outcomes;
    if (answer.stoppedAt === NOT_TAKEN_UP) return calls.map(() => timedOut(TAKE_UP_LIMIT_MS));
    const stopped = calls[answer.stoppedAt]!;
    const spent = budgets[stopped.budgetKey];
    const others = await runInTurn(calls.filter((_, index) => index !== answer.stoppedAt), spent === undefined ? budgets : { ...budgets, [stopped.budgetKey]: spent - limitMs });
    return [...others.slice(0, answer.stoppedAt), timedOut(limitMs), ...others.slice(answer.stoppedAt)];
  }

  return {
    run: async (call) => (await inTurn(() => runInTurn([{ call, budgetKey: '' }], {})))[0]!,
    runAll: (calls, budgets) => inTurn(() => runInTurn(calls, budgets)),
    check: (code) =>
      inTurn(async () => {
        const answer = await ask((id) => ({ id, kind: 'check', code }), limitMs);
        if ('checked' in answer) return answer.checked;
        return { name: 'TimeoutError', message: `The code's top level ran longer than ${options.timeoutMs} ms` };
      }),
    async dispose() {
      const current = thread;
      thread = undefined;
      if (current) await (await current.catch(() => undefined))?.worker.terminate();
    },
  };
}

async function startThread(options: SandboxOptions): Promise<Thread> {
  const busySince = new Float64Array(new SharedArrayBuffer(2 * Float64Array.BYTES_PER_ELEMENT));
  const worker = new Worker(threadEntry(import.meta.url, 'sandbox-thread'), { workerData: { options, busySince } satisfies SandboxThreadData });
  // A relay stops without waiting for this thread; nothing it holds needs an orderly end.
  worker.unref();
  const requests = portRequests<SandboxAnswer>(worker, {
    isAnswer: (message): message is SandboxAnswer => typeof (message as SandboxAnswer | null)?.id === 'number',
    closedError: () => new Error('The transformation thread ended'),
  });
  const [ready] = await Promise.race([once(worker, 'message'), once(worker, 'error').then(([error]) => Promise.reject(error as Error))]);
  if ((ready as { ready?: boolean }).ready !== true) throw new Error('The transformation thread did not start');
  // A new thread's first message takes up to a second or so to be handled (measured under load): taken
  // here, with no hard stop, so that no call's time limit pays for it.
  await requests.request((id) => ({ id, kind: 'check', code: 'function transform(request) { return request; }' }) satisfies SandboxRequest);
  return { worker, requests, busySince };
}

/** What a sandbox thread is started with. */
export interface SandboxThreadData {
  options: SandboxOptions;
  busySince: Float64Array;
}
