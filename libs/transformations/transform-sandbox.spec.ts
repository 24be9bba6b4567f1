import { expect } from 'chai';
import { createTransformSandbox, type TransformCall, type TransformSandbox } from './transform-sandbox.js';

const request = { body: { type: 'order.created', amount: 5 }, headers: { 'content-type': 'application/json' }, query: { a: '1' }, path: '/hook' };
const context = { eventId: 'evt_1', sourceId: 'src_1', destinationId: 'dst_1', receivedAt: '2026-01-01T00:00:00.000Z', env: { TOKEN: 'secret-value' } };

function call(code: string, overrides: Partial<TransformCall> = {}): TransformCall {
  return { code, request, context, maxResultBytes: 65_536, ...overrides };
}

describe('TransformSandbox', function () {
  // QuickJS as WebAssembly loads and warms up once for the suite.
  this.timeout(20_000);
  let sandbox: TransformSandbox;
  before(async () => {
    sandbox = await createTransformSandbox({ timeoutMs: 100, memoryMb: 16 });
  });
  after(() => sandbox.dispose());

  it('returns the transformed request and the context it was given', () => {
    const outcome = sandbox.run(call('function transform(request, context) { request.body.seen = context.env.TOKEN + ":" + context.eventId; request.headers["x-step"] = "1"; return request; }'));
    expect(outcome.error).to.equal(null);
    expect(outcome.result).to.deep.equal({ ...request, body: { type: 'order.created', amount: 5, seen: 'secret-value:evt_1' }, headers: { 'content-type': 'application/json', 'x-step': '1' } });
  });

  it('answers null when the code returns null', () => {
    const outcome = sandbox.run(call('function transform() { return null; }'));
    expect(outcome).to.include({ result: null, error: null });
  });

  it('keeps the first 20 console lines, 4 KB in all', () => {
    const outcome = sandbox.run(call('function transform(r) { for (let i = 0; i < 30; i++) console.log("line", i, {i}); return r; }'));
    expect(outcome.logs).to.have.length(20);
    expect(outcome.logs[0]).to.equal('line 0 {"i":0}');
    const long = sandbox.run(call('function transform(r) { console.log("x".repeat(3000)); console.log("y".repeat(3000)); console.log("z"); return r; }'));
    expect(long.logs.join('')).to.have.length(4096);
  });

  it('refuses code that does not compile or defines no transform', () => {
    expect(sandbox.check('function transform( {')).to.have.property('name', 'SyntaxError');
    expect(sandbox.check('function other() {}')).to.deep.equal({ name: 'TypeError', message: 'The code defines no function transform' });
    expect(sandbox.check('function transform(r) { return r; }')).to.equal(null);
  });

  describe('with hostile code', () => {
    it('stops an infinite loop at the time limit, and the next call runs', () => {
      const outcome = sandbox.run(call('function transform() { console.log("spinning"); for (;;) {} }'));
      expect(outcome.error).to.deep.equal({ name: 'TimeoutError', message: 'The transformation ran longer than 100 ms' });
      expect(outcome.logs).to.deep.equal(['spinning']);
      expect(sandbox.run(call('function transform(r) { return r; }')).error).to.equal(null);
    });

    it('stops a memory bomb at the memory limit, and offers no buffers outside it', async () => {
      // A small memory limit and a generous time limit, so that memory runs out first on a slow machine.
      const small = await createTransformSandbox({ timeoutMs: 20_000, memoryMb: 2 });
      try {
        const outcome = small.run(call('function transform() { const all = []; for (let i = 0; ; i++) all.push([i, i, i, i, i, i, i, i]); }'));
        expect(outcome.result).to.equal(null);
        expect(outcome.error).to.deep.equal({ name: 'InternalError', message: 'out of memory' });
        const buffers = small.run(call('function transform(r) { return { ...r, body: [typeof ArrayBuffer, typeof Uint8Array, typeof SharedArrayBuffer, typeof DataView] }; }'));
        expect(buffers.result?.body).to.deep.equal(['undefined', 'undefined', 'undefined', 'undefined']);
      } finally {
        small.dispose();
      }
    });

    it('stops deep recursion inside the sandbox', () => {
      const outcome = sandbox.run(call('function transform(r) { const down = (n) => down(n + 1) + 1; return down(0); }'));
      expect(outcome.error?.message).to.match(/stack overflow/);
      expect(sandbox.run(call('function transform(r) { return r; }')).error).to.equal(null);
    });

    it('refuses a result larger than the payload limit', () => {
      const outcome = sandbox.run(call('function transform(r) { r.body = "x".repeat(2000); return r; }', { maxResultBytes: 1000 }));
      expect(outcome.error).to.deep.equal({ name: 'ResultTooLargeError', message: 'The result is larger than the payload limit of 1000 bytes' });
    });

    it('reaches no process through constructors, nor any host global', () => {
      const escapes = [
        "this.constructor.constructor('return process')()",
        "request.constructor.constructor('return process')()",
        "(function () {}).constructor('return globalThis.process')().env",
        "Object.getPrototypeOf(function* () {}).constructor('yield process')().next().value",
      ];
      for (const escape of escapes) {
        const outcome = sandbox.run(call(`function transform(request) { return { ...request, body: typeof (${escape}) }; }`));
        expect(outcome.result?.body ?? outcome.error?.name, escape).to.be.oneOf(['undefined', 'ReferenceError', 'TypeError']);
      }
      const globals = sandbox.run(call('function transform(r) { return { ...r, body: [typeof require, typeof process, typeof setTimeout, typeof fetch, typeof setInterval, typeof queueMicrotask] }; }'));
      expect(globals.result?.body).to.deep.equal(['undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'undefined']);
    });

    it('has no import() and no require', () => {
      const imported = sandbox.run(call('function transform(r) { import("fs"); return r; }'));
      const required = sandbox.run(call('function transform(r) { require("fs"); return r; }'));
      expect(imported.result).to.equal(null);
      expect(imported.error).to.not.equal(null);
      expect(required.error).to.deep.include({ name: 'ReferenceError' });
    });

    it('keeps no state between calls: built-in prototypes, globals, top-level bindings', () => {
      const code = `
        let calls = 0;
        function transform(r) {
          calls += 1;
          const before = { proto: typeof Object.prototype.polluted, global: typeof globalThis.kept, arrayProto: typeof [].evil, calls };
          Object.prototype.polluted = 1;
          try { Array.prototype.evil = () => 1; } catch (e) {}
          globalThis.kept = 1;
          return { ...r, body: before };
        }`;
      sandbox.run(call(code));
      const second = sandbox.run(call(code));
      expect(second.error).to.equal(null);
      expect(second.result?.body).to.deep.equal({ proto: 'undefined', global: 'undefined', arrayProto: 'undefined', calls: 1 });
    });

    it('still lets code set name and toString on its own objects', () => {
      const outcome = sandbox.run(call('function transform(r) { class Bad extends Error { constructor() { super("m"); this.name = "Bad"; } } const o = {}; o.toString = () => "o"; return { ...r, body: new Bad().name + String(o) }; }'));
      expect(outcome.result?.body).to.equal('Bado');
    });

    it('reports a thrown non-Error as text', () => {
      expect(sandbox.run(call('function transform() { throw "plain string"; }')).error).to.deep.equal({ name: 'Error', message: 'plain string' });
      expect(sandbox.run(call('function transform() { throw { code: 7 }; }')).error).to.deep.equal({ name: 'Error', message: '{"code":7}' });
      expect(sandbox.run(call('function transform() { throw new RangeError("bad range"); }')).error).to.deep.equal({ name: 'RangeError', message: 'bad range' });
    });

    it('refuses a result with the wrong shape', () => {
      for (const result of ['42', '"text"', '[]', '{ body: 1 }', '{ ...r, headers: { a: 1 } }', 'undefined', 'Promise.resolve(r)']) {
        const outcome = sandbox.run(call(`function transform(r) { return ${result}; }`));
        expect(outcome.result, result).to.equal(null);
        expect(outcome.error?.name, result).to.equal('ShapeError');
      }
    });
  });
});
