import { performance } from 'node:perf_hooks';
import { newQuickJSWASMModule, type QuickJSContext, type QuickJSHandle, type QuickJSRuntime, type QuickJSWASMModule } from 'quickjs-emscripten';
import { SANDBOX_PRELUDE } from './sandbox-prelude.js';
import { transformResultSchema, type TransformRequest } from './transform-request.js';

export interface TransformContext {
  eventId: string;
  sourceId: string;
  destinationId: string;
  receivedAt: string;
  env: Record<string, string>;
}

export interface TransformError {
  name: string;
  message: string;
}

/** One call's outcome: `result` null with `error` null means the code returned null (send nothing). */
export interface TransformOutcome {
  result: TransformRequest | null;
  error: TransformError | null;
  logs: string[];
  durationMs: number;
}

export interface TransformCall {
  code: string;
  request: TransformRequest;
  context: TransformContext;
  /** The organization's payload limit: a larger result is an error. */
  maxResultBytes: number;
}

export interface SandboxOptions {
  timeoutMs: number;
  memoryMb: number;
  /** Compiled contexts kept, one per distinct code. */
  maxCompiled?: number;
}

const MAX_LOG_LINES = 20;
const MAX_LOG_BYTES = 4096;
/** QuickJS's own stack bound: deep recursion is a RangeError inside, never a fault of the shared module. */
const MAX_STACK_BYTES = 256 * 1024;

/** A runtime and context holding one code's compiled factory, reused with its state frozen (sandbox-prelude.ts). */
interface Compiled {
  runtime: QuickJSRuntime;
  context: QuickJSContext;
  harness: QuickJSHandle;
  factory: QuickJSHandle;
  logs: string[];
  deadline: number;
  interrupted: boolean;
}

export class TransformSandbox {
  private readonly compiled = new Map<string, Compiled>();

  constructor(
    private readonly engine: QuickJSWASMModule,
    private readonly options: SandboxOptions,
  ) {}

  /** Compiles `code` on its own: null when it compiles and defines `transform`, else why not. */
  check(code: string): TransformError | null {
    try {
      this.compile(code);
      return null;
    } catch (error) {
      return errorOf(error);
    } finally {
      this.discard(code);
    }
  }

  run(call: TransformCall): TransformOutcome {
    const started = performance.now();
    let compiled: Compiled | undefined;
    try {
      compiled = this.compiledFor(call.code);
      compiled.logs = [];
      compiled.interrupted = false;
      compiled.deadline = performance.now() + this.options.timeoutMs;
      const result = this.callHarness(compiled, call);
      return { result, error: null, logs: compiled.logs, durationMs: performance.now() - started };
    } catch (error) {
      const logs = compiled?.logs ?? [];
      const failure = compiled?.interrupted ? { name: 'TimeoutError', message: `The transformation ran longer than ${this.options.timeoutMs} ms` } : errorOf(error);
      // A context that failed may hold anything half-built (a memory fault, a pending job): start over next time.
      this.discard(call.code);
      return { result: null, error: failure, logs, durationMs: performance.now() - started };
    }
  }

  dispose(): void {
    for (const code of [...this.compiled.keys()]) this.discard(code);
  }

  private callHarness(compiled: Compiled, call: TransformCall): TransformRequest | null {
    const { context } = compiled;
    const input = context.newString(JSON.stringify({ request: call.request, context: call.context }));
    const output = context.callFunction(compiled.harness, context.undefined, compiled.factory, input);
    input.dispose();
    const text = context.unwrapResult(output);
    try {
      if (compiled.runtime.hasPendingJob()) throw new SandboxError('ShapeError', 'The transformation must return its request, not a promise');
      if (context.typeof(text) !== 'string') throw new SandboxError('ShapeError', 'The transformation must return a request object or null');
      const lengthHandle = context.getProp(text, 'length');
      const length = context.getNumber(lengthHandle);
      lengthHandle.dispose();
      if (length > call.maxResultBytes) throw new SandboxError('ResultTooLargeError', `The result is larger than the payload limit of ${call.maxResultBytes} bytes`);
      const json = context.getString(text);
      if (Buffer.byteLength(json) > call.maxResultBytes) throw new SandboxError('ResultTooLargeError', `The result is larger than the payload limit of ${call.maxResultBytes} bytes`);
      return parseResult(json);
    } finally {
      text.dispose();
    }
  }

  private compiledFor(code: string): Compiled {
    const found = this.compiled.get(code);
    if (found) {
      // Most recently used last: the first key is the one to evict.
      this.compiled.delete(code);
      this.compiled.set(code, found);
      return found;
    }
    const made = this.compile(code);
    this.compiled.set(code, made);
    const limit = this.options.maxCompiled ?? 64;
    if (this.compiled.size > limit) this.discard(this.compiled.keys().next().value!);
    return made;
  }

  private compile(code: string): Compiled {
    const runtime = this.engine.newRuntime();
    runtime.setMemoryLimit(this.options.memoryMb * 1024 * 1024);
    runtime.setMaxStackSize(MAX_STACK_BYTES);
    const context = runtime.newContext();
    // The prelude is the relay's own code: no deadline until the code's top level runs.
    const compiled: Compiled = { runtime, context, harness: context.undefined, factory: context.undefined, logs: [], deadline: Infinity, interrupted: false };
    this.compiled.set(code, compiled);
    runtime.setInterruptHandler(() => {
      if (performance.now() <= compiled.deadline) return false;
      compiled.interrupted = true;
      return true;
    });
    installConsole(compiled);
    const prelude = context.unwrapResult(context.evalCode(SANDBOX_PRELUDE, 'prelude.js'));
    const freeze = context.getProp(prelude, 'freeze');
    try {
      compiled.harness = context.getProp(prelude, 'harness');
      compiled.factory = compileFactory(context, code);
      context.unwrapResult(context.callFunction(freeze, context.undefined, compiled.factory)).dispose();
      compiled.deadline = performance.now() + this.options.timeoutMs;
      assertDefinesTransform(context, compiled.factory);
      return compiled;
    } finally {
      freeze.dispose();
      prelude.dispose();
    }
  }

  private discard(code: string): void {
    const compiled = this.compiled.get(code);
    if (!compiled) return;
    this.compiled.delete(code);
    compiled.harness.dispose();
    compiled.factory.dispose();
    compiled.context.dispose();
    compiled.runtime.dispose();
  }
}

/**
 * The code as the body of a function, built by the sandbox's own `Function` constructor: nothing of
 * the code runs before a call, it cannot close the body early, and the factory is frozen with the rest.
 */
function compileFactory(context: QuickJSContext, code: string): QuickJSHandle {
  const functionConstructor = context.getProp(context.global, 'Function');
  const body = context.newString(`${code}\n;return typeof transform === 'function' ? transform : undefined;`);
  try {
    return context.unwrapResult(context.callFunction(functionConstructor, context.undefined, body));
  } finally {
    body.dispose();
    functionConstructor.dispose();
  }
}

/** Runs the code's top level once, under the call's limits, to see that it defines `transform`. */
function assertDefinesTransform(context: QuickJSContext, factory: QuickJSHandle): void {
  const transform = context.unwrapResult(context.callFunction(factory, context.undefined));
  const defined = context.typeof(transform) === 'function';
  transform.dispose();
  if (!defined) throw new SandboxError('TypeError', 'The code defines no function transform');
}

function installConsole(compiled: Compiled): void {
  const { context } = compiled;
  const log = context.newFunction('log', (...args) => {
    const line = args.map((arg) => (context.typeof(arg) === 'string' ? context.getString(arg) : JSON.stringify(context.dump(arg)) ?? String(context.dump(arg)))).join(' ');
    keepLine(compiled.logs, line);
  });
  const consoleObject = context.newObject();
  for (const name of ['log', 'info', 'warn', 'error', 'debug']) context.setProp(consoleObject, name, log);
  context.setProp(context.global, 'console', consoleObject);
  consoleObject.dispose();
  log.dispose();
}

/** The first 20 lines, 4 KB in all: a line past the budget is cut to what is left. */
function keepLine(logs: string[], line: string): void {
  if (logs.length >= MAX_LOG_LINES) return;
  const used = logs.reduce((total, kept) => total + Buffer.byteLength(kept), 0);
  const left = MAX_LOG_BYTES - used;
  if (left <= 0) return;
  logs.push(Buffer.byteLength(line) <= left ? line : Buffer.from(line).subarray(0, left).toString('utf8'));
}

function parseResult(json: string): TransformRequest | null {
  const value: unknown = JSON.parse(json);
  if (value === null) return null;
  const parsed = transformResultSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new SandboxError('ShapeError', `The result is not a request: ${issue.path.join('.') || 'result'}: ${issue.message}`);
  }
  return parsed.data;
}

class SandboxError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

/** What a failure shows: an Error's own name and message, any other thrown value as text. */
function errorOf(error: unknown): TransformError {
  if (error instanceof SandboxError) return { name: error.name, message: error.message };
  const thrown: unknown = error instanceof Error && 'cause' in error ? error.cause : error;
  if (typeof thrown === 'object' && thrown !== null && typeof (thrown as TransformError).name === 'string' && typeof (thrown as TransformError).message === 'string') {
    return { name: (thrown as TransformError).name, message: (thrown as TransformError).message };
  }
  return { name: 'Error', message: typeof thrown === 'string' ? thrown : (JSON.stringify(thrown) ?? String(thrown)) };
}

/**
 * Loads QuickJS (WebAssembly, shipped in the package) once and warms it up: the engine's first call
 * compiles its code lazily, which would otherwise eat the first transformation's time budget.
 */
export async function createTransformSandbox(options: SandboxOptions): Promise<TransformSandbox> {
  const engine = await newQuickJSWASMModule();
  const sandbox = new TransformSandbox(engine, { ...options, timeoutMs: 10_000 });
  sandbox.run({ code: 'function transform(request) { return request; }', request: { body: { warm: [1, 'up'] }, headers: {}, query: {}, path: '/' }, context: { eventId: '', sourceId: '', destinationId: '', receivedAt: '', env: {} }, maxResultBytes: 1024 });
  sandbox.dispose();
  return new TransformSandbox(engine, options);
}
