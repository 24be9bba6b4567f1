/**
 * What a transformation adds per event: `TransformSandbox.run` with the code's context reused (what the
 * router does), beside the same work written in Node (parse, change, stringify: the floor no sandbox
 * avoids) and beside a fresh QuickJS runtime and context per call (the alternative decision
 * docs/decisions/0063-transformation-sandbox.md rejected). Target (issue 57): at most about 50 µs added
 * per event, 10 % of a core at 1,000 events/s.
 *
 * Figures are CPU time per call (user and system), not wall time.
 *
 * Run: node --import tsx bench/transformations/bench-transform-cost.ts [--calls 20000] [--fresh-calls 2000]
 */
import { parseArgs } from 'node:util';
import { newQuickJSWASMModule } from 'quickjs-emscripten';
import { createTransformSandbox } from '../../libs/transformations/transform-sandbox.js';

const { values: args } = parseArgs({
  options: {
    calls: { type: 'string', default: '20000' },
    'fresh-calls': { type: 'string', default: '2000' },
  },
});
const CALLS = Number(args.calls);
const FRESH_CALLS = Number(args['fresh-calls']);

const CODE = 'function transform(request, context) { request.body.relayed = context.eventId; request.headers["x-tag"] = "1"; return request; }';
const request = { body: { type: 'order.created', id: 'ord_1001', amount: 4200, items: [{ sku: 'a', qty: 1 }, { sku: 'b', qty: 2 }] }, headers: { 'content-type': 'application/json', 'user-agent': 'shop' }, query: {}, path: '/' };
const context = { eventId: 'evt_1', sourceId: 'src_1', destinationId: 'dst_1', receivedAt: '2026-01-01T00:00:00.000Z', env: {} };

/**
 * CPU time (user and system) per call, in µs: on a shared machine wall time also counts time the process
 * was not running. The warm-up is long: V8 compiles the QuickJS wasm again with its optimizing tier in
 * background threads, whose CPU time would otherwise land in the first figure (about 10 times the rest).
 */
function microsPerCall(calls: number, work: () => void): number {
  for (let i = 0; i < Math.max(3000, calls / 4); i += 1) work();
  const started = process.cpuUsage();
  for (let i = 0; i < calls; i += 1) work();
  const used = process.cpuUsage(started);
  return (used.user + used.system) / calls;
}

const floor = microsPerCall(CALLS, () => {
  const copy = JSON.parse(JSON.stringify({ request, context })) as { request: typeof request & { body: Record<string, unknown> }; context: typeof context };
  copy.request.body.relayed = copy.context.eventId;
  JSON.stringify(copy.request);
});

const sandbox = await createTransformSandbox({ timeoutMs: 1000, memoryMb: 16 });
const reused = microsPerCall(CALLS, () => {
  const outcome = sandbox.run({ code: CODE, request, context, maxResultBytes: 1 << 20 });
  if (outcome.error) throw new Error(outcome.error.message);
});
sandbox.dispose();

const engine = await newQuickJSWASMModule();
const input = JSON.stringify({ request, context });
const fresh = microsPerCall(FRESH_CALLS, () => {
  const runtime = engine.newRuntime();
  runtime.setMemoryLimit(16 << 20);
  const vm = runtime.newContext();
  const result = vm.unwrapResult(vm.evalCode(`${CODE}\nconst call = ${input}; JSON.stringify(transform(call.request, call.context))`));
  vm.getString(result);
  result.dispose();
  vm.dispose();
  runtime.dispose();
});

console.log(`Node floor (parse, change, stringify)   ${floor.toFixed(1)} µs CPU/call`);
console.log(`sandbox, context reused (the relay)     ${reused.toFixed(1)} µs CPU/call  (+${(reused - floor).toFixed(1)} µs over the floor)`);
console.log(`fresh runtime and context per call     ${fresh.toFixed(1)} µs CPU/call`);
