/**
 * What the embedded mode's dedup journal costs beyond its rows: memory per live key, and the time to
 * rebuild its index at start. Fills the journal's own file (`dedup.sqlite` beside a SQLite store, as the
 * relay opens it) with N events of two keys each (the
 * 5-minute body hash and a provider id, as a codehost source with dedup on claims), then opens the
 * journal in a fresh process-local heap measurement.
 *
 *   node --expose-gc --import tsx bench/dedup/bench-dedup-journal.ts [--events 500000]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { newId } from '../../libs/ids/ids.js';
import { openDedupJournalFile } from '../../libs/store/dedup-journal.js';
import { openStore } from '../../libs/store/store.js';

const { values: args } = parseArgs({ options: { events: { type: 'string', default: '500000' } } });
const events = Number(args.events);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-journal-bench-'));
const store = await openStore({ dataDir });
try {
  const sourceId = newId('src');
  const now = Date.now();
  const filling = await openDedupJournalFile({ dataDir, store: store.sql });
  const BATCH = 250;
  for (let start = 0; start < events; start += BATCH) {
    await Promise.all(
      Array.from({ length: Math.min(BATCH, events - start) }, (_, i) => {
        const n = start + i;
        const keys = [
          { key: `payload:sha256:${n.toString(16).padStart(64, '0')}`, windowMs: 5 * 60_000 },
          { key: `provider:${n}-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0`, windowMs: 24 * 3_600_000 },
        ];
        return filling.claim(sourceId, keys, newId('evt'), now);
      }),
    );
  }
  await filling.close();

  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const startedAt = performance.now();
  const journal = await openDedupJournalFile({ dataDir, store: store.sql });
  const loadMs = performance.now() - startedAt;
  gc();
  const keys = journal.indexedKeys();
  const bytesPerKey = (process.memoryUsage().heapUsed - heapBefore) / keys;
  console.log(`dedup journal: ${events} events, ${keys} live keys`);
  // A million keys at loadMs / keys ms each, in seconds.
  console.log(`index rebuilt at start in ${loadMs.toFixed(0)} ms (${((loadMs * 1000) / keys).toFixed(2)} s per million keys)`);
  // A million events of two keys, in MB.
  console.log(`memory ${bytesPerKey.toFixed(0)} bytes per live key (${(bytesPerKey * 2).toFixed(0)} MB for a million events of two keys)`);
  await journal.close();
} finally {
  await store.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
