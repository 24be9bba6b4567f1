/**
 * Issue 54's broker drill at a production drill's size: a relay process (all roles) on a 3-broker Apache
 * Kafka of the run's own with PostgreSQL, `--rate` webhooks a second for `--seconds`, one broker SIGKILLed
 * `--kill-after` seconds in, then restarted, and 5 s more load. Prints what senders saw (answers by status,
 * p50/p99/max, before and after the kill), how long each webhook acknowledged after the kill waited for
 * its delivery, and the duplicates. `apps/relay/kafka-broker-faults.spec.ts` runs the same drill at 20/s
 * for 20 s with its bounds asserted.
 *
 *   node --import tsx bench/broker/bench-broker-kill.ts [--rate 1000] [--seconds 30] [--kill-after 5]
 */
import { parseArgs } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestDatabase } from '../../libs/testing/postgres.js';
import { brokerKillDrill, drillLine, startFaultRig } from '../../testing/broker-kill-drill.js';

const { values: args } = parseArgs({
  options: {
    rate: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '30' },
    'kill-after': { type: 'string', default: '5' },
  },
});

const database = await createTestDatabase();
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-broker-kill-'));
const rig = await startFaultRig({ dataDir, databaseUrl: database.url });
try {
  const options = { ...rig, rate: Number(args.rate), seconds: Number(args.seconds), killAfterMs: Number(args['kill-after']) * 1000, brokerId: 2, drainMs: 180_000 };
  console.log(`broker kill drill: ${options.rate}/s for ${options.seconds} s on 3 brokers of Apache Kafka ${rig.cluster.version} + PostgreSQL, ${os.cpus().length} cores; ${new Date().toISOString()}`);
  const drill = await brokerKillDrill(options);
  console.log(drillLine(drill, options));
} finally {
  await rig.stop();
  await database.drop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
