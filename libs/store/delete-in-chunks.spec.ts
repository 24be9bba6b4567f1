import { expect } from 'chai';
import { deleteInChunks } from './delete-in-chunks.js';

describe('deleteInChunks', () => {
  it('deletes chunk after chunk until one comes back short, and returns the total', async () => {
    let rows = 25;
    const limits: number[] = [];
    const total = await deleteInChunks(async (limit) => {
      limits.push(limit);
      const deleted = Math.min(limit, rows);
      rows -= deleted;
      return deleted;
    }, 10);
    expect(total).to.equal(25);
    expect(rows).to.equal(0);
    expect(limits).to.deep.equal([10, 10, 10]);
  });

  it('stops after one statement when there is nothing to delete', async () => {
    let calls = 0;
    expect(await deleteInChunks(async () => (calls++, 0), 10)).to.equal(0);
    expect(calls).to.equal(1);
  });

  it('lets other work run between chunks', async () => {
    let rows = 30;
    let interleaved = false;
    const deleting = deleteInChunks(async (limit) => {
      const deleted = Math.min(limit, rows);
      rows -= deleted;
      return deleted;
    }, 10);
    setImmediate(() => (interleaved = rows > 0));
    await deleting;
    expect(interleaved).to.equal(true);
  });
});
