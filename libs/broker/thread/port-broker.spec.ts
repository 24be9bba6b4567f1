import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { expect } from 'chai';
import type { Broker, RecordBatch } from '../broker.js';
import { BrokerRequestError, BrokerUnavailableError, MessageTooLargeError } from '../errors.js';
import { StorageFullError } from '../../errors/errors.js';
import { isDependencyFailure } from '../../pipeline/poison-records.js';
import { TimedOutError } from '../../time/within.js';
import { openEmbeddedBroker } from '../embedded/embedded-broker.js';
import { describeBrokerContract } from '../../testing/broker-contract.js';
import { isTrue, waitFor } from '../../testing/wait-for.js';
import { connectPortBroker } from './port-broker.js';
import { serveBroker, type ServedBroker } from './serve-broker.js';

describe('port broker', function () {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-port-broker-'));
  let owner: Broker;
  const served: ServedBroker[] = [];

  /** A client over a port of its own to the one owning broker, as a pipeline thread has. */
  function connect(): Broker {
    const channel = new MessageChannel();
    served.push(serveBroker(owner, channel.port1));
    return connectPortBroker(channel.port2);
  }

  before(function () {
    owner = openEmbeddedBroker({ dataDir, errorBackoff: { initialMs: 20, maxMs: 200 }, maxMessageBytes: 64 * 1024 * 1024 });
  });

  after(async function () {
    await Promise.all(served.splice(0).map((server) => server.close()));
    await owner.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  describeBrokerContract('embedded log over a MessagePort', async () => connect());

  describe('beyond the contract', function () {
    let client: Broker;

    beforeEach(function () {
      client = connect();
    });

    afterEach(async function () {
      await client.close();
    });

    it("hands a handler's failure to the owning consumer, which delivers the batch again", async function () {
      const topic = `port-retry-${Date.now()}`;
      await client.admin().ensureTopics([{ topic, partitions: 1 }]);
      const seen: string[] = [];
      const consumer = client.consumer({
        groupId: `${topic}-group`,
        topics: [topic],
        fromBeginning: true,
        handleBatch: async (batch: RecordBatch) => {
          seen.push(batch.records.map((record) => record.value.toString()).join());
          if (seen.length === 1) throw new Error('first try fails');
        },
      });
      await consumer.start();
      await client.producer().send(topic, [{ key: 'k', value: Buffer.from('one') }]);
      await waitFor('the batch handled twice', () => seen.length >= 2, isTrue, 10_000, 10);
      expect(seen.slice(0, 2)).to.deep.equal(['one', 'one']);
      await consumer.stop();
    });

    it("rejects a record larger than the owner's limit with MessageTooLargeError", async function () {
      const small = openEmbeddedBroker({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'relay-port-small-')), maxMessageBytes: 10 });
      const channel = new MessageChannel();
      const server = serveBroker(small, channel.port1);
      const limited = connectPortBroker(channel.port2);
      try {
        const error = await limited.producer().send('too-large', [{ key: null, value: Buffer.alloc(11) }]).catch((caught: unknown) => caught);
        expect(error).to.be.instanceOf(MessageTooLargeError);
        expect((error as Error).message).to.match(/11 bytes/);
      } finally {
        await limited.close();
        await server.close();
        await small.close();
      }
    });

    it('passes a full disk on as StorageFullError and any other retriable failure as one, never as poison', async function () {
      const refusals: unknown[] = [new StorageFullError(), new TimedOutError('the disk', 10), new BrokerRequestError('no such topic')];
      const refusing: Broker = {
        producer: () => ({ send: async () => Promise.reject(refusals.shift()) }),
        consumer: (options) => owner.consumer(options),
        admin: () => owner.admin(),
        close: async () => undefined,
      };
      const channel = new MessageChannel();
      const server = serveBroker(refusing, channel.port1);
      const client = connectPortBroker(channel.port2);
      try {
        const send = () => client.producer().send('refused', [{ key: null, value: Buffer.from('x') }]).catch((caught: unknown) => caught);
        const [full, timedOut, refused] = [await send(), await send(), await send()];
        expect(full).to.be.instanceOf(StorageFullError);
        expect(timedOut).to.be.instanceOf(BrokerUnavailableError);
        expect(refused).to.be.instanceOf(BrokerRequestError);
        expect([full, timedOut, refused].map(isDependencyFailure)).to.deep.equal([true, true, false]);
      } finally {
        await client.close();
        await server.close();
      }
    });

    it('rejects calls with BrokerUnavailableError once the serving side has gone', async function () {
      await Promise.all(served.splice(0).map((server) => server.close()));
      const error = await client.admin().listTopics().catch((caught: unknown) => caught);
      expect(error).to.be.instanceOf(BrokerUnavailableError);
    });
  });
});
