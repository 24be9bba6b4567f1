import { expect } from 'chai';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { storeBatcher } from './store-batcher.js';

/** Calls made one a turn while the first batch is held open: the batches each store's batcher runs. */
async function batchesWhileTheFirstRuns(kind: 'sqlite' | 'postgres'): Promise<string[][]> {
  const batches: string[][] = [];
  let releaseFirst!: () => void;
  const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
  const call = storeBatcher({ kind }, async (items: string[]) => {
    batches.push(items);
    if (batches.length === 1) await firstHeld;
    return items;
  });
  const answers = [call('a')];
  await nextTurn();
  answers.push(call('b'));
  await nextTurn();
  answers.push(call('c'));
  await nextTurn();
  releaseFirst();
  expect(await Promise.all(answers)).to.deep.equal(['a', 'b', 'c']);
  return batches;
}

describe('storeBatcher', () => {
  it('on SQLite runs the calls of each turn as a batch at once', async () => {
    expect(await batchesWhileTheFirstRuns('sqlite')).to.deep.equal([['a'], ['b'], ['c']]);
  });

  it('on PostgreSQL runs one batch at a time, the next carrying every call made meanwhile', async () => {
    expect(await batchesWhileTheFirstRuns('postgres')).to.deep.equal([['a'], ['b', 'c']]);
  });
});
