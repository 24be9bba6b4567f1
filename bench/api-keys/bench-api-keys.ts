/**
 * What an API key check costs a request: `authenticate()` of the key authenticator on a real store
 * (SQLite in a temp dir) with the key cached, as every request after a key's first finds it. Target:
 * under 10 µs. Printed beside its floor, the SHA-256 of the key alone (the part no lookup can avoid), and
 * beside the cost of a key the cache does not hold (one store read: a first request, or an unknown key).
 *
 * Run: node --import tsx bench/api-keys/bench-api-keys.ts [--iterations 200000] [--keys 1000]
 */
import { hash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createKeyAuthenticator } from '../../libs/keys/key-authenticator.js';
import { openStore } from '../../libs/store/store.js';

const { values: args } = parseArgs({
  options: {
    iterations: { type: 'string', default: '200000' },
    keys: { type: 'string', default: '1000' },
  },
});
const ITERATIONS = Number(args.iterations);
const KEYS = Number(args.keys);
const TARGET_MICROS = 10;

async function microsPerCall(iterations: number, call: (n: number) => unknown): Promise<number> {
  for (let n = 0; n < Math.min(iterations, 10_000); n += 1) await call(n);
  const start = performance.now();
  for (let n = 0; n < iterations; n += 1) await call(n);
  return ((performance.now() - start) * 1000) / iterations;
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-api-keys-'));
const store = await openStore({ dataDir });
try {
  const org = await store.organizations.create('bench', 'pro');
  const keys: string[] = [];
  // Several organizations' worth of keys in the cache, as a busy installation would have.
  for (let n = 0; n < KEYS; n += 1) keys.push((await store.apiKeys.create(org.id, `key ${n}`, n % 3 === 0 ? 'admin' : 'read')).key);
  const authenticator = createKeyAuthenticator({ keys: store.apiKeys, organizations: store.organizations });
  for (const key of keys) await authenticator.authenticate(key);

  const floor = await microsPerCall(ITERATIONS, (n) => hash('sha256', keys[n % KEYS]!, 'buffer'));
  const cached = await microsPerCall(ITERATIONS, (n) => authenticator.authenticate(keys[n % KEYS]!));
  const unknown = await microsPerCall(Math.min(ITERATIONS, 5_000), (n) => authenticator.authenticate(`rk_unknown-${n}`));

  console.log(`API key check, ${KEYS} keys cached, ${ITERATIONS} checks (SQLite store)`);
  console.log(`  floor: SHA-256 of the key only      ${floor.toFixed(2)} µs`);
  console.log(`  cached key (every request but a key's first)  ${cached.toFixed(2)} µs  (${(cached / floor).toFixed(1)}× the floor)`);
  console.log(`  key not in the cache (one store read)          ${unknown.toFixed(2)} µs`);
  console.log(`  target < ${TARGET_MICROS} µs per request: ${cached < TARGET_MICROS ? 'met' : 'NOT met'}`);
} finally {
  await store.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
