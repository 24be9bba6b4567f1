import { expect } from 'chai';
import { createMutex, mutexHold } from './connection-mutex.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('connection mutex hold', () => {
  it('holds statements asked for after the hold until the release', async () => {
    const exclusive = createMutex();
    const writer = mutexHold(exclusive);
    writer.hold();
    let ran = false;
    const statement = exclusive(async () => void (ran = true));
    await tick();
    expect(ran).to.equal(false);
    writer.release();
    await statement;
    expect(ran).to.equal(true);
  });

  it('starts the hold only after the work already running, which it does not interrupt', async () => {
    const exclusive = createMutex();
    const writer = mutexHold(exclusive);
    const order: string[] = [];
    let finishRunning!: () => void;
    const running = exclusive(() => new Promise<void>((resolve) => (finishRunning = resolve)).then(() => void order.push('running')));
    await tick();
    writer.hold();
    const after = exclusive(async () => void order.push('after'));
    finishRunning();
    await running;
    await tick();
    expect(order).to.deep.equal(['running']);
    writer.release();
    await after;
    expect(order).to.deep.equal(['running', 'after']);
  });

  it('is cancelled by a release that comes before it could start, and never holds later', async () => {
    const exclusive = createMutex();
    const writer = mutexHold(exclusive);
    let finishRunning!: () => void;
    void exclusive(() => new Promise<void>((resolve) => (finishRunning = resolve)));
    await tick();
    writer.hold();
    writer.release();
    finishRunning();
    let ran = false;
    await exclusive(async () => void (ran = true));
    expect(ran).to.equal(true);
  });

  it('queues one hold for repeated holds, released by one release', async () => {
    const exclusive = createMutex();
    const writer = mutexHold(exclusive);
    writer.hold();
    writer.hold();
    await tick();
    writer.release();
    let ran = false;
    await exclusive(async () => void (ran = true));
    expect(ran).to.equal(true);
  });
});
