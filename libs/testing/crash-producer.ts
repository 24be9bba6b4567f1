/**
 * Child process of the crash test: produces numbered records to the embedded log as fast as it can and
 * prints each record's number on stdout once its send has resolved (stdout to a pipe is synchronous on
 * Linux, so a printed number was acknowledged before any later kill).
 * Usage: node --import tsx crash-producer.ts <dataDir> <firstNumber>
 */
import { CRASH_TOPIC, crashKey, crashValue } from './crash-records.js';
import { openEmbeddedBroker } from '../broker/embedded/embedded-broker.js';

const LANES = 16;

const [dataDir, first] = process.argv.slice(2);
if (!dataDir || first === undefined) throw new Error('usage: crash-producer.ts <dataDir> <firstNumber>');
const producer = openEmbeddedBroker({ dataDir }).producer();
let next = Number(first);

async function lane(): Promise<void> {
  for (;;) {
    const numbers = Array.from({ length: 1 + (next % 4) }, (_, i) => next + i);
    next += numbers.length;
    await producer.send(
      CRASH_TOPIC,
      numbers.map((n) => ({ key: crashKey(n), value: crashValue(n), headers: { n: String(n) } })),
    );
    process.stdout.write(`${numbers.join('\n')}\n`);
  }
}

await Promise.all(Array.from({ length: LANES }, lane));
