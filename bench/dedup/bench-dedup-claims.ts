/**
 * What a dedup claim costs the relay on PostgreSQL: N claims of two keys each (the 5-minute body hash
 * and a provider id, as a codehost source with dedup on makes), `--concurrency` in flight at a time,
 * through the ledger the gateway uses. Per claim: wall time and the process's CPU (user + system).
 * The baseline, measured in the same run on the same pool: a `SELECT 1` per call, at the same
 * concurrency (the round trip no claim can beat). Three alternating rounds of each, on a fresh database.
 *
 *   node --import tsx bench/dedup/bench-dedup-claims.ts [--claims 4000] [--concurrency 20]
 */
import { parseArgs } from 'node:util';
import { newId } from '../../libs/ids/ids.js';
import { createDedupLedger } from '../../libs/store/dedup-ledger.js';
import { openStore } from '../../libs/store/store.js';
import { createTestDatabase, postgresUnavailableReason } from '../../libs/testing/postgres.js';
import { sourceRow } from '../../libs/testing/store-fixtures.js';

const { values: args } = parseArgs({ options: { claims: { type: 'string', default: '4000' }, concurrency: { type: 'string', default: '20' } } });
const claims = Number(args.claims);
const concurrency = Number(args.concurrency);
const ROUNDS = 3;

const reason = await postgresUnavailableReason();
if (reason) {
  console.log(`skipped: ${reason}`);
  process.exit(0);
}
const database = await createTestDatabase();
const store = await openStore({ dataDir: '', databaseUrl: database.url });
try {
  const ledger = createDedupLedger(store.sql);
  const org = await store.organizations.create('bench-dedup-claims', 'pro');
  const { id: sourceId } = await store.sources.insert(sourceRow(org.id));
  let serial = 0;

  /** Runs `call` `claims` times, `concurrency` at a time; answers µs of wall time and of CPU per call. */
  async function measure(call: () => Promise<unknown>): Promise<{ wallUs: number; cpuUs: number }> {
    const cpuBefore = process.cpuUsage();
    const startedAt = performance.now();
    let started = 0;
    const lane = async (): Promise<void> => {
      while (started < claims) {
        started += 1;
        await call();
      }
    };
    await Promise.all(Array.from({ length: concurrency }, lane));
    const cpu = process.cpuUsage(cpuBefore);
    return { wallUs: ((performance.now() - startedAt) * 1000) / claims, cpuUs: (cpu.user + cpu.system) / claims };
  }

  const claim = () => {
    serial += 1;
    const keys = [
      { key: `payload:sha256:${serial.toString(16).padStart(64, '0')}`, windowMs: 5 * 60_000 },
      { key: `pid:codehost:${serial}-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0`, windowMs: 24 * 3_600_000 },
    ];
    return ledger.claim(sourceId, keys, newId('evt'), Date.now());
  };
  const roundTrip = () => store.sql.all('SELECT 1 AS one');

  await measure(claim); // warm-up: the pool's connections, the function's plan
  console.log(`dedup claims on PostgreSQL: ${claims} claims of two keys, ${concurrency} in flight`);
  for (let round = 1; round <= ROUNDS; round += 1) {
    const bare = await measure(roundTrip);
    const claimed = await measure(claim);
    console.log(
      `round ${round}: claim ${claimed.wallUs.toFixed(0)} µs, CPU ${claimed.cpuUs.toFixed(0)} µs | baseline SELECT 1 ${bare.wallUs.toFixed(0)} µs, CPU ${bare.cpuUs.toFixed(0)} µs`,
    );
  }
} finally {
  await store.close();
  await database.drop();
}
