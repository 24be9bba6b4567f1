import { parentPort, workerData } from 'node:worker_threads';
import { createTransformSandbox, type SandboxOptions } from './transform-sandbox.js';
import type { SandboxAnswer, SandboxRequest } from './threaded-sandbox.js';

/**
 * The transformation sandbox on a thread of its own (threaded-sandbox.ts): its calls run here, one at
 * a time, so the thread that serves ingest and routing never runs hostile code, and a call that the
 * engine's own limits do not stop in time is stopped by ending this thread.
 */
const sandbox = await createTransformSandbox(workerData as SandboxOptions);

parentPort!.on('message', (request: SandboxRequest) => {
  const answer: SandboxAnswer = request.kind === 'run' ? { id: request.id, outcome: sandbox.run(request.call) } : { id: request.id, checked: sandbox.check(request.code) };
  parentPort!.postMessage(answer);
});
parentPort!.postMessage({ ready: true });
