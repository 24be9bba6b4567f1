import { expect } from 'chai';
import { CommitOrder } from './commit-order.js';

function deferred() {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((ok, fail) => ((resolve = ok), (reject = fail)));
  return { promise, resolve, reject };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('CommitOrder', function () {
  function recorder() {
    const commits: string[] = [];
    const rewinds: string[] = [];
    const order = new CommitOrder({
      commit: (topic, partition, next) => void commits.push(`${topic}:${partition}@${next}`),
      rewind: (topic, partition, from) => void rewinds.push(`${topic}:${partition}@${from}`),
    });
    return { order, commits, rewinds };
  }

  it('commits a batch without work left at once', function () {
    const { order, commits } = recorder();
    order.handled('t', 0, '0', '3');
    expect(commits).to.deep.equal(['t:0@3']);
    expect(order.handedOn('t', 0)).to.equal(undefined);
  });

  it('keeps the commit below a batch whose work goes on, however many later batches complete', async function () {
    const { order, commits } = recorder();
    const first = deferred();
    order.handled('t', 0, '0', '3', first.promise);
    order.handled('t', 0, '3', '5');
    order.handled('t', 0, '5', '9', Promise.resolve());
    await turn();
    expect(commits).to.deep.equal([]);
    expect(order.handedOn('t', 0)).to.equal('9');
    first.resolve();
    await turn();
    expect(commits).to.deep.equal(['t:0@9']);
    expect(order.handedOn('t', 0)).to.equal(undefined);
  });

  it('keeps partitions apart', async function () {
    const { order, commits } = recorder();
    order.handled('t', 0, '0', '3', new Promise(() => undefined));
    order.handled('t', 1, '0', '2', Promise.resolve());
    await turn();
    expect(commits).to.deep.equal(['t:1@2']);
  });

  it('rewinds to the first record of a batch whose work failed and forgets the batches after it', async function () {
    const { order, commits, rewinds } = recorder();
    const first = deferred();
    const second = deferred();
    order.handled('t', 0, '0', '3', Promise.resolve());
    order.handled('t', 0, '3', '5', first.promise);
    order.handled('t', 0, '5', '9', second.promise);
    await turn();
    first.reject(new Error('parking failed'));
    await turn();
    second.resolve();
    await turn();
    expect(commits).to.deep.equal(['t:0@3']);
    expect(rewinds).to.deep.equal(['t:0@3']);
    expect(order.handedOn('t', 0)).to.equal(undefined);
  });

  it('drops the batches of partitions a rebalance took away, so their completions commit nothing', async function () {
    const { order, commits } = recorder();
    const work = deferred();
    order.handled('t', 0, '0', '3', work.promise);
    order.handled('t', 1, '0', '4', new Promise(() => undefined));
    order.keepOnly((_topic, partition) => partition === 1);
    work.resolve();
    await turn();
    expect(commits).to.deep.equal([]);
    expect(order.handedOn('t', 0)).to.equal(undefined);
    expect(order.handedOn('t', 1)).to.equal('4');
  });

  it('tells when every completion given has settled', async function () {
    const { order } = recorder();
    const work = deferred();
    order.handled('t', 0, '0', '3', work.promise);
    let settled = false;
    void order.settled().then(() => (settled = true));
    await turn();
    expect(settled).to.equal(false);
    work.reject(new Error('failed'));
    await turn();
    await turn();
    expect(settled).to.equal(true);
  });
});
