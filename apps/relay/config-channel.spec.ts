import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openEmbeddedBroker } from '../../libs/broker/embedded/embedded-broker.js';
import type { Broker } from '../../libs/broker/broker.js';
import type { ConfigChange } from '../../libs/pipeline/config-change.js';
import { waitFor } from '../../libs/testing/wait-for.js';
import { createConfigChannel, type ConfigChannel } from './config-channel.js';

describe('createConfigChannel', () => {
  let dataDir: string;
  let broker: Broker;
  const channels: ConfigChannel[] = [];

  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-config-'));
    broker = openEmbeddedBroker({ dataDir });
  });

  afterEach(async () => {
    for (const channel of channels.splice(0)) await channel.stop();
    await broker.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function process(name: string): Promise<{ channel: ConfigChannel; heard: ConfigChange[] }> {
    const producer = broker.producer();
    const channel = createConfigChannel({
      broker,
      publish: (topic, messages) => producer.send(topic, messages),
      deadLetters: async () => {},
      groupId: `config-${name}`,
    });
    const heard: ConfigChange[] = [];
    channel.listen((change) => heard.push(change));
    await channel.start();
    channels.push(channel);
    return { channel, heard };
  }

  const change = (id: string): ConfigChange => ({ kind: 'source', action: 'updated', orgId: 'org_1', id });

  it('applies a change in the announcing process at once and once only, and in every other process once', async () => {
    const a = await process('a');
    const b = await process('b');
    await a.channel.announce(change('src_1'));
    expect(a.heard, 'applied before the announcement resolves').to.deep.equal([change('src_1')]);
    // A change from b, heard by a after a's own record: by then a has read its own announcement back.
    await b.channel.announce(change('src_2'));
    await waitFor("b's change in a", async () => a.heard.length, (length) => length >= 2);
    await waitFor("a's change in b", async () => b.heard.length, (length) => length >= 2);
    expect(a.heard).to.deep.equal([change('src_1'), change('src_2')]);
    expect(b.heard).to.have.deep.members([change('src_1'), change('src_2')]);
  });
});
