import { monotonicFactory } from 'ulid';

/** Resource prefixes; every id is `<prefix>_<ULID>` so ids sort by creation time. */
export type IdPrefix = 'src' | 'dst' | 'evt' | 'dlv' | 'rte' | 'org' | 'key' | 'att';

const nextUlid = monotonicFactory();

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${nextUlid().toLowerCase()}`;
}

const ID_SHAPE = /^[a-z]{3}_[0-9a-z]{26}$/;

/** True when `value` looks like an id of the given prefix (cheap check before a lookup). */
export function isId(prefix: IdPrefix, value: string): boolean {
  return value.startsWith(`${prefix}_`) && ID_SHAPE.test(value);
}
