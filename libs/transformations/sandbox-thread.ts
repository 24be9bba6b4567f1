import { parentPort, workerData } from 'node:worker_threads';
import { createTransformSandbox, type TransformOutcome } from './transform-sandbox.js';
import { NOT_TAKEN_UP, type BudgetedCall, type CallBudgets, type SandboxAnswer, type SandboxRequest, type SandboxThreadData } from './threaded-sandbox.js';

/**
 * The transformation sandbox on a thread of its own (threaded-sandbox.ts): its calls run here, one at
 * a time (a request carries many), so the thread that serves ingest and routing never runs hostile code,
 * and a call that the engine's own limits do not stop in time is stopped by ending this thread.
 */
const { options, busySince } = workerData as SandboxThreadData;
const sandbox = await createTransformSandbox(options);

/**
 * Read by the hard stop on the other thread: the call in hand's own time, from when it begins here, and
 * its index. Both stay set between the calls of a request, so the request's time is never a call's.
 */
function inHand<T>(index: number, work: () => T): T {
  busySince[1] = index;
  busySince[0] = Date.now();
  return work();
}

/** The calls in order, each key's calls stopping once they have spent its budget. */
function runAll(calls: readonly BudgetedCall[], budgets: CallBudgets): (TransformOutcome | null)[] {
  const spent = new Map<string, number>();
  return calls.map(({ call, budgetKey }, index) => {
    const used = spent.get(budgetKey) ?? 0;
    const budget = budgets[budgetKey];
    if (budget !== undefined && used >= budget) return null;
    const outcome = inHand(index, () => sandbox.run(call));
    spent.set(budgetKey, used + outcome.durationMs);
    return outcome;
  });
}

function answer(request: SandboxRequest): SandboxAnswer {
  try {
    return request.kind === 'run' ? { id: request.id, outcomes: runAll(request.calls, request.budgets) } : { id: request.id, checked: inHand(0, () => sandbox.check(request.code)) };
  } finally {
    busySince[0] = 0;
    busySince[1] = NOT_TAKEN_UP;
  }
}

busySince[1] = NOT_TAKEN_UP;
parentPort!.on('message', (request: SandboxRequest) => parentPort!.postMessage(answer(request)));
parentPort!.postMessage({ ready: true });
