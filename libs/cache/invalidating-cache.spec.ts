import { expect } from 'chai';
import { createInvalidatingCache, type InvalidatingCache } from './invalidating-cache.js';

/** A store whose reads answer only when the test says so, each read recorded by key. */
function controlledStore<V>() {
  const reads: { key: string; answer: (value: V) => void; fail: (error: Error) => void }[] = [];
  return {
    reads,
    load: (key: string) =>
      new Promise<V>((resolve, reject) => {
        reads.push({ key, answer: resolve, fail: reject });
      }),
  };
}

/** A store that answers every read at once with the key's current value, counting reads. */
function countingStore(values: Map<string, string | null>) {
  const counted = { reads: 0, load: async (key: string) => (counted.reads++, values.get(key) ?? null) };
  return counted;
}

describe('createInvalidatingCache', () => {
  it('shares one load between concurrent gets of a key', async () => {
    const store = controlledStore<string>();
    const cache = createInvalidatingCache({ load: store.load });
    const gets = Promise.all([cache.get('a'), cache.get('a')]);
    expect(store.reads).to.have.length(1);
    store.reads[0]!.answer('A');
    expect(await gets).to.deep.equal(['A', 'A']);
  });

  it('keeps a loaded value, null included, so a missing thing is read once', async () => {
    const store = countingStore(new Map([['a', 'A']]));
    const cache = createInvalidatingCache({ load: store.load });
    expect([await cache.get('a'), await cache.get('a')]).to.deep.equal(['A', 'A']);
    expect([await cache.get('gone'), await cache.get('gone')]).to.deep.equal([null, null]);
    expect(store.reads).to.equal(2);
    expect(cache.size).to.equal(2);
  });

  it('keeps undefined as a loaded value too', async () => {
    let reads = 0;
    const cache = createInvalidatingCache({ load: async () => void reads++ });
    await cache.get('a');
    await cache.get('a');
    expect(reads).to.equal(1);
  });

  it('hands a failed load to every waiter and loads again on the next get', async () => {
    const store = controlledStore<string>();
    const cache = createInvalidatingCache({ load: store.load });
    const gets = [cache.get('a'), cache.get('a')].map((get) => get.then(() => 'answered', (error: Error) => error.message));
    store.reads[0]!.fail(new Error('store down'));
    expect(await Promise.all(gets)).to.deep.equal(['store down', 'store down']);
    expect(cache.size).to.equal(0);

    const retried = cache.get('a');
    expect(store.reads).to.have.length(2);
    store.reads[1]!.answer('A');
    expect(await retried).to.equal('A');
  });

  it('treats a load that throws instead of rejecting as a failed load', async () => {
    const cache = createInvalidatingCache<string, string>({
      load: () => {
        throw new Error('bad key');
      },
    });
    const failure = await cache.get('a').catch((error: Error) => error.message);
    expect(failure).to.equal('bad key');
    expect(cache.size).to.equal(0);
  });

  for (const [overtaker, invalidate] of [
    ['its key', (cache: InvalidatingCache<string, string, []>) => cache.invalidate('a')],
    ['every key', (cache: InvalidatingCache<string, string, []>) => cache.invalidate()],
  ] as const) {
    it(`gives a load that an invalidation of ${overtaker} overtook to its waiters without keeping it`, async () => {
      const store = controlledStore<string>();
      const cache = createInvalidatingCache({ load: store.load });
      const overtaken = cache.get('a');
      invalidate(cache);
      const fresh = cache.get('a');
      expect(store.reads).to.have.length(2);

      store.reads[0]!.answer('old');
      expect(await overtaken).to.equal('old');
      store.reads[1]!.answer('new');
      expect(await fresh).to.equal('new');
      expect(await cache.get('a')).to.equal('new');
      expect(store.reads).to.have.length(2);
    });
  }

  it('keeps a load that only an invalidation of another key came during', async () => {
    const store = controlledStore<string>();
    const cache = createInvalidatingCache({ load: store.load });
    const loading = cache.get('a');
    cache.invalidate('b');
    store.reads[0]!.answer('A');
    await loading;
    expect(await cache.get('a')).to.equal('A');
    expect(store.reads).to.have.length(1);
  });

  it('reads an invalidated key again, and every key after invalidating all', async () => {
    const values = new Map([['a', 'A'], ['b', 'B']]);
    const store = countingStore(values);
    const cache = createInvalidatingCache({ load: store.load });
    await cache.get('a');
    await cache.get('b');
    values.set('a', 'A2').set('b', 'B2');

    cache.invalidate('a');
    expect([await cache.get('a'), await cache.get('b')]).to.deep.equal(['A2', 'B']);
    cache.invalidate();
    expect([await cache.get('a'), await cache.get('b')]).to.deep.equal(['A2', 'B2']);
    expect(store.reads).to.equal(5);
  });

  it('reads a key again once its time to live has passed on the injected clock', async () => {
    let clock = 1_000;
    const values = new Map([['a', 'A']]);
    const store = countingStore(values);
    const cache = createInvalidatingCache({ load: store.load, ttlMs: 500, now: () => clock });
    await cache.get('a');
    values.set('a', 'A2');
    clock += 499;
    expect(await cache.get('a')).to.equal('A');
    clock += 1;
    expect(await cache.get('a')).to.equal('A2');
    expect(store.reads).to.equal(2);
  });

  it('keeps values for good without a time to live', async () => {
    let clock = 0;
    const store = countingStore(new Map([['a', 'A']]));
    const cache = createInvalidatingCache({ load: store.load, now: () => clock });
    await cache.get('a');
    clock = Number.MAX_SAFE_INTEGER;
    await cache.get('a');
    expect(store.reads).to.equal(1);
  });

  it('evicts the oldest entry at its bound', async () => {
    const store = countingStore(new Map());
    const cache = createInvalidatingCache({ load: store.load, maxEntries: 2 });
    for (const key of ['a', 'b', 'c']) await cache.get(key);
    expect(cache.size).to.equal(2);
    await cache.get('c');
    await cache.get('b');
    expect(store.reads).to.equal(3);
    await cache.get('a');
    expect(store.reads).to.equal(4);
  });

  it('passes what the key does not say to the load of its first caller', async () => {
    const seen: string[] = [];
    const cache = createInvalidatingCache({ load: async (id: string, orgId: string) => (seen.push(`${orgId}:${id}`), orgId) });
    const answers = await Promise.all([cache.get('dst_1', 'org_a'), cache.get('dst_1', 'org_b')]);
    expect(answers).to.deep.equal(['org_a', 'org_a']);
    expect(seen).to.deep.equal(['org_a:dst_1']);
  });
});
