import { expect } from 'chai';
import { createThreadedSandbox, type Sandbox } from './threaded-sandbox.js';
import type { TransformCall } from './transform-sandbox.js';

const request = { body: { type: 'order.created' }, headers: { 'content-type': 'application/json' }, query: {}, path: '/hook' };
const context = { eventId: 'evt_1', sourceId: 'src_1', destinationId: 'dst_1', receivedAt: '2026-01-01T00:00:00.000Z', env: {} };
const call = (code: string): TransformCall => ({ code, request, context, maxResultBytes: 65_536 });

/** Strings escape QuickJS's memory limit, and building one of 100 KB is one slow step between its interrupt polls. */
const STRING_BOMB = 'function transform() { const hoard = []; for (;;) hoard.push("x".repeat(100000)); }';

describe('The sandbox on a thread of its own', function () {
  this.timeout(30_000);
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await createThreadedSandbox({ timeoutMs: 100, memoryMb: 16 });
  });
  after(() => sandbox.dispose());

  it('runs a transformation and checks code, as the sandbox does', async () => {
    const outcome = await sandbox.run(call('function transform(r) { console.log("seen"); return { ...r, body: { kind: r.body.type } }; }'));
    expect(outcome).to.deep.include({ result: { ...request, body: { kind: 'order.created' } }, error: null, logs: ['seen'] });
    expect(await sandbox.check('function other() {}')).to.deep.equal({ name: 'TypeError', message: 'The code defines no function transform' });
    expect(await sandbox.check('function transform(r) { return r; }')).to.equal(null);
  });

  it('ends the thread of a string bomb that the engine does not stop, keeps this thread free meanwhile, and runs the next call on a new thread', async () => {
    let turns = 0;
    const ticking = setInterval(() => (turns += 1), 5);
    try {
      const outcome = await sandbox.run(call(STRING_BOMB));
      expect(outcome).to.deep.include({ result: null, error: { name: 'TimeoutError', message: 'The transformation ran longer than 100 ms' } });
    } finally {
      clearInterval(ticking);
    }
    expect(turns, 'timer turns of this thread while the bomb ran').to.be.above(0);
    expect((await sandbox.run(call('function transform(r) { return r; }'))).error).to.equal(null);
  });

  it('runs calls one after another, each with its own time limit', async () => {
    const outcomes = await Promise.all([sandbox.run(call('function transform() { for (;;) {} }')), sandbox.run(call('function transform(r) { return r; }'))]);
    expect(outcomes.map((outcome) => outcome.error?.name ?? null)).to.deep.equal(['TimeoutError', null]);
  });

  it('runs many calls as one request, in order, each key stopping once its calls have spent its budget', async () => {
    const slow = call('function transform(r) { const until = Date.now() + 5; while (Date.now() < until) {} return r; }');
    const quick = call('function transform(r) { return { ...r, body: { seen: true } }; }');
    const outcomes = await sandbox.runAll([{ call: slow, budgetKey: 'heavy' }, { call: quick, budgetKey: 'light' }, { call: slow, budgetKey: 'heavy' }, { call: quick, budgetKey: 'light' }], { heavy: 1 });
    expect(outcomes.map((outcome) => (outcome === null ? 'not run' : (outcome.error?.name ?? 'ran')))).to.deep.equal(['ran', 'ran', 'not run', 'ran']);
    expect(outcomes[1]?.result?.body).to.deep.equal({ seen: true });
  });

  it('times out the call of a request that ended the thread, and answers the calls around it on a new thread', async () => {
    const identity = call('function transform(r) { return r; }');
    const outcomes = await sandbox.runAll(
      [{ call: identity, budgetKey: 'a' }, { call: call(STRING_BOMB), budgetKey: 'b' }, { call: identity, budgetKey: 'b' }, { call: identity, budgetKey: 'c' }],
      { b: 100 },
    );
    expect(outcomes.map((outcome) => (outcome === null ? 'not run' : (outcome.error?.name ?? 'ran')))).to.deep.equal(['ran', 'TimeoutError', 'not run', 'ran']);
  });
});
