import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import type { BrokerRecord } from '../broker.js';
import { BrokerUnavailableError } from '../errors.js';
import { CRASH_TOPIC, crashKey, crashValue } from '../../testing/crash-records.js';
import { EMBEDDED_LOG_FILE, openEmbeddedBroker } from './embedded-broker.js';
import { isTrue, waitFor } from '../../testing/wait-for.js';

const PRODUCER_SCRIPT = fileURLToPath(new URL('../../testing/crash-producer.ts', import.meta.url));
const KILLS = 20;

describe('embedded log under kill -9', function () {
  this.timeout(120_000);
  let dataDir: string;

  beforeEach(function () {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-broker-crash-'));
  });

  afterEach(function () {
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it(`keeps every acknowledged record, intact and in order, across ${KILLS} kills at random moments`, async function () {
    const acknowledged: number[] = [];
    let next = 0;
    for (let kill = 0; kill < KILLS; kill++) {
      const child = spawn(process.execPath, ['--import', 'tsx', PRODUCER_SCRIPT, dataDir, String(next)], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const output = collect(child);
      await output.firstAcknowledgement;
      if (kill === 0) {
        expect(() => openEmbeddedBroker({ dataDir }), 'a second process opening the log').to.throw(BrokerUnavailableError);
      }
      await sleep(10 + Math.random() * 150);
      child.kill('SIGKILL');
      await output.exited;
      acknowledged.push(...output.numbers());

      const log = await readLog(dataDir);
      const present = new Map(log.map((record) => [Number(record.headers.n), record]));
      const missing = acknowledged.filter((n) => !present.has(n));
      expect(missing, `acknowledged records missing after kill ${kill + 1}`).to.deep.equal([]);
      for (const record of log) {
        const n = Number(record.headers.n);
        expect(record.key).to.equal(crashKey(n));
        expect(record.value.equals(crashValue(n)), `value of record ${n}`).to.equal(true);
      }
      for (const partition of new Set(log.map((record) => record.partition))) {
        const numbers = log.filter((record) => record.partition === partition).map((record) => Number(record.headers.n));
        expect(numbers, `order in partition ${partition}`).to.deep.equal([...numbers].sort((a, b) => a - b));
      }
      expect(integrityCheck(dataDir)).to.equal('ok');
      // A loop, not Math.max(...keys): the log can hold more records than a call has argument slots.
      next = [...present.keys()].reduce((max, n) => Math.max(max, n), next) + 1;
    }
    expect(acknowledged.length).to.be.greaterThan(KILLS);
  });
});

interface ChildOutput {
  firstAcknowledgement: Promise<void>;
  exited: Promise<void>;
  /** Numbers on complete lines: a line cut by the kill was never fully reported. */
  numbers(): number[];
}

function collect(child: ChildProcess): ChildOutput {
  let stdout = '';
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const firstAcknowledgement = new Promise<void>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (stdout.includes('\n')) resolve();
    });
    child.once('exit', (code, signal) => reject(new Error(`crash producer exited early (${signal ?? code}): ${stderr}`)));
  });
  return {
    firstAcknowledgement,
    exited,
    numbers: () => stdout.slice(0, stdout.lastIndexOf('\n')).split('\n').filter(Boolean).map(Number),
  };
}

/** Every record of the crash topic, read through a fresh consumer group, in partition and offset order. */
async function readLog(dataDir: string): Promise<BrokerRecord[]> {
  const broker = openEmbeddedBroker({ dataDir });
  try {
    const groupId = `verify-${Date.now()}-${Math.random()}`;
    const total = (await broker.admin().lag(groupId, [CRASH_TOPIC])).reduce((sum, entry) => sum + entry.lag, 0);
    const records: BrokerRecord[] = [];
    const consumer = broker.consumer({
      groupId,
      topics: [CRASH_TOPIC],
      fromBeginning: true,
      maxBatchSize: 5_000,
      concurrency: 4,
      handleBatch: async (batch) => void records.push(...batch.records),
    });
    await consumer.start();
    await waitFor(`all ${total} records`, () => records.length >= total, isTrue, 10_000, 5).finally(() => consumer.stop());
    expect(records.length).to.equal(total);
    return records.sort((a, b) => a.partition - b.partition || Number(a.offset) - Number(b.offset));
  } finally {
    await broker.close();
  }
}

function integrityCheck(dataDir: string): unknown {
  const db = new Database(path.join(dataDir, EMBEDDED_LOG_FILE));
  try {
    return db.pragma('integrity_check', { simple: true });
  } finally {
    db.close();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
