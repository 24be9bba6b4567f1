import { parentPort, workerData } from 'node:worker_threads';
import { createTransformSandbox } from './transform-sandbox.js';
import type { SandboxAnswer, SandboxRequest, SandboxThreadData } from './threaded-sandbox.js';

/**
 * The transformation sandbox on a thread of its own (threaded-sandbox.ts): its calls run here, one at
 * a time, so the thread that serves ingest and routing never runs hostile code, and a call that the
 * engine's own limits do not stop in time is stopped by ending this thread.
 */
const { options, busySince } = workerData as SandboxThreadData;
const sandbox = await createTransformSandbox(options);

parentPort!.on('message', (request: SandboxRequest) => {
  // Read by the hard stop on the other thread: the call's own time, from when it begins here.
  busySince[0] = Date.now();
  try {
    const answer: SandboxAnswer = request.kind === 'run' ? { id: request.id, outcome: sandbox.run(request.call) } : { id: request.id, checked: sandbox.check(request.code) };
    parentPort!.postMessage(answer);
  } finally {
    busySince[0] = 0;
  }
});
parentPort!.postMessage({ ready: true });
