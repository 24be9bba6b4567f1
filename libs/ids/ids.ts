import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';

/** Resource prefixes; every id is `<prefix>_<ULID>` so ids sort by creation time. */
export type IdPrefix = 'src' | 'dst' | 'evt' | 'dlv' | 'rte' | 'org' | 'key' | 'att' | 'rpl' | 'trs' | 'iss' | 'nch' | 'ntf';

const POOL_BYTES = 4096;

/**
 * Cryptographic randomness drawn from a pooled buffer: ulid's own Node PRNG asks the kernel for one
 * byte per character (16 calls per id), which at ingest rates costs more than the rest of the id.
 */
function pooledRandom(): () => number {
  const pool = Buffer.alloc(POOL_BYTES);
  let next = POOL_BYTES;
  return () => {
    if (next === POOL_BYTES) {
      randomFillSync(pool);
      next = 0;
    }
    return pool[next++]! / 256;
  };
}

const nextUlid = monotonicFactory(pooledRandom());

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${nextUlid().toLowerCase()}`;
}

const ID_SHAPE = /^[a-z]{3}_[0-9a-z]{26}$/;

/** True when `value` looks like an id of the given prefix (cheap check before a lookup). */
export function isId(prefix: IdPrefix, value: string): boolean {
  return value.startsWith(`${prefix}_`) && ID_SHAPE.test(value);
}
