import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Broker } from '../../libs/broker/broker.js';
import { openEmbeddedBroker } from '../../libs/broker/embedded/embedded-broker.js';
import { ATTEMPTS_TOPIC, CORE_TOPICS, RECORDER_GROUP } from '../../libs/pipeline/topology.js';
import { ManualTimers } from '../../libs/testing/manual-timers.js';
import { isTrue, waitFor } from '../../libs/testing/wait-for.js';
import { recorderCaughtUp } from './recorder-caught-up.js';

describe('deliverer: waiting for the recorder before asking the store about jobs read again', function () {
  let dataDir: string;
  let broker: Broker;

  beforeEach(async function () {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-caught-up-'));
    broker = openEmbeddedBroker({ dataDir });
    await broker.admin().ensureTopics(CORE_TOPICS.filter(({ topic }) => topic === ATTEMPTS_TOPIC));
    await broker.producer().send(ATTEMPTS_TOPIC, [{ key: 'evt_1', value: Buffer.from('a') }, { key: 'evt_2', value: Buffer.from('b') }]);
  });

  afterEach(async function () {
    await broker.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('resolves once the recorder group has committed the attempts published before it was asked, and not before', async function () {
    const timers = new ManualTimers(Date.now());
    let caughtUp = false;
    const waiting = recorderCaughtUp(broker.admin(), { now: timers.now, schedule: timers.schedule }).then(() => (caughtUp = true));
    await waitFor('a look at the offsets that finds them behind', () => timers.pendingCount > 0, isTrue, 5000, 10);
    expect(caughtUp).to.equal(false);

    const recorder = broker.consumer({ groupId: RECORDER_GROUP, topics: [ATTEMPTS_TOPIC], fromBeginning: true, handleBatch: async () => undefined });
    await recorder.start();
    await waitFor('the recorder to commit', async () => (await broker.admin().lag(RECORDER_GROUP, [ATTEMPTS_TOPIC])).every((partition) => partition.lag === 0), isTrue, 5000, 10);
    timers.advance(50);
    await waiting;
    await recorder.stop();
  });

  it('gives up after its longest wait when no recorder runs', async function () {
    const timers = new ManualTimers(Date.now());
    const startedAt = timers.now();
    let gaveUp = false;
    const waiting = recorderCaughtUp(broker.admin(), { now: timers.now, schedule: timers.schedule, maxWaitMs: 200 }).then(() => (gaveUp = true));
    for (;;) {
      await waitFor('the next look, or the end', () => gaveUp || timers.pendingCount > 0, isTrue, 5000, 10);
      if (gaveUp) break;
      timers.advance(50);
    }
    expect(timers.now() - startedAt).to.equal(200);
    await waiting;
  });
});
