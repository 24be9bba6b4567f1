import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Broker, TopicSpec } from '../../libs/broker/broker.js';
import { openEmbeddedBroker } from '../../libs/broker/embedded/embedded-broker.js';
import { createJobIntake } from './job-intake.js';

describe('the job intake parking jobs in their destination topic', () => {
  let dataDir: string;
  let log: Broker;
  /** The topics each ensureTopics call was asked for, and the keys of the records sent. */
  let ensured: string[][];
  let sent: string[];
  /** ensureTopics waits for this, then fails with `refusal` if there is one. */
  let gate: Promise<void>;
  let openGate: () => void;
  let refusal: Error | undefined;

  /** The embedded log, its admin's ensureTopics and its sends counted, the first held back at the gate. */
  function broker(): Broker {
    return {
      producer: () => ({
        send: (topic, messages, options) => {
          sent.push(...messages.map(({ key }) => String(key)));
          return log.producer().send(topic, messages, options);
        },
      }),
      consumer: (options) => log.consumer(options),
      close: () => log.close(),
      admin: () => ({
        ...log.admin(),
        async ensureTopics(specs: TopicSpec[]) {
          ensured.push(specs.map(({ topic }) => topic));
          await gate;
          if (refusal) throw refusal;
          await log.admin().ensureTopics(specs);
        },
      }),
    };
  }

  const job = (key: string) => ({ topic: 'relay.lanes', partition: 0, offset: '0', key, value: Buffer.from(key), headers: {}, timestamp: 0 });
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  const quiet = { info() {}, warn() {}, error() {} };

  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-intake-'));
    log = openEmbeddedBroker({ dataDir });
    ensured = [];
    sent = [];
    gate = new Promise((resolve) => (openGate = resolve));
    refusal = undefined;
  });

  afterEach(async () => {
    await log.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('makes a topic once for the jobs parked in it at the same time, and sends each once it is made', async () => {
    const intake = createJobIntake({ broker: broker(), logger: quiet, concurrency: 1 });
    const parked = ['a', 'b', 'c'].map((key) => intake.park('relay.dst.hanging', [job(key)]));
    await turn();
    expect(ensured).to.deep.equal([['relay.dst.hanging']]);
    expect(sent, 'sent before the topic is made').to.deep.equal([]);
    openGate();
    await Promise.all(parked);
    await intake.park('relay.dst.hanging', [job('d')]);
    expect(ensured).to.have.length(1);
    expect(sent.sort()).to.deep.equal(['a', 'b', 'c', 'd']);
  });

  it('fails the parkings that waited on a topic that could not be made, and makes it at the next', async () => {
    const intake = createJobIntake({ broker: broker(), logger: quiet, concurrency: 1 });
    refusal = new Error('the cluster refused');
    const parked = ['a', 'b'].map((key) => intake.park('relay.dst.hanging', [job(key)]).then(() => 'sent', (error: Error) => error.message));
    await turn();
    openGate();
    expect(await Promise.all(parked)).to.deep.equal(['the cluster refused', 'the cluster refused']);
    refusal = undefined;
    await intake.park('relay.dst.hanging', [job('c')]);
    expect(ensured).to.deep.equal([['relay.dst.hanging'], ['relay.dst.hanging']]);
    expect(sent).to.deep.equal(['c']);
  });
});
