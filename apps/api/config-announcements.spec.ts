import { expect } from 'chai';
import type { Consumer } from '../../libs/broker/broker.js';
import { decodeConfigChange, type ConfigChange } from '../../libs/pipeline/config-change.js';
import { CONFIG_TOPIC } from '../../libs/pipeline/topology.js';
import { startHttpSink, type HttpSink } from '../../libs/testing/http-sink.js';
import { describeEachStore } from '../../libs/testing/store-targets.js';
import { waitFor } from '../../libs/testing/wait-for.js';
import { createdId, startApiHarness, type ApiHarness } from '../../testing/api-harness.js';

/** What each write of the API tells the other processes on relay.config: the change it made, with its kind. */
describeEachStore('configuration changes the API announces', (target) => {
  let h: ApiHarness;
  let sink: HttpSink;
  let reader: Consumer;
  const heard: ConfigChange[] = [];

  before(async function () {
    h = await startApiHarness(this, target);
    sink = await startHttpSink();
    reader = h.relay.broker.consumer({
      groupId: 'test-announcements',
      topics: [CONFIG_TOPIC],
      fromBeginning: true,
      handleBatch: async (batch) => void heard.push(...batch.records.map(decodeConfigChange)),
    });
    await reader.start();
  });

  after(async () => {
    await reader?.stop();
    await sink?.close();
    await h?.stop();
  });

  /** The resource changes heard after `write`, once a marker change made after it is heard too. */
  async function announcedBy(write: () => Promise<unknown>): Promise<unknown[]> {
    const from = heard.length;
    await write();
    const marker = await createdId(h.api, '/api/sources', { name: 'Marker', slug: `marker-${from}` });
    const changes = await waitFor(
      'the marker announcement',
      async () => heard.slice(from),
      (changes) => changes.some((change) => change.kind === 'source' && change.id === marker),
    );
    return changes.filter((change) => !(change.kind === 'source' && change.id === marker)).map((change) => ({ ...change, orgId: undefined }));
  }

  it('announces a created, updated, rotated and deleted destination with those kinds, and nothing for a test send', async () => {
    let id = '';
    expect(await announcedBy(async () => (id = await createdId(h.api, '/api/destinations', { name: 'Announced', url: sink.url })))).to.deep.equal([
      { kind: 'destination', action: 'created', id, orgId: undefined },
    ]);
    expect(await announcedBy(() => h.api('PATCH', `/api/destinations/${id}`, { body: { enabled: false } }))).to.deep.equal([
      { kind: 'destination', action: 'updated', id, orgId: undefined },
    ]);
    expect(await announcedBy(() => h.api('POST', `/api/destinations/${id}/rotate-signing-secret`))).to.deep.equal([
      { kind: 'destination', action: 'rotated', id, orgId: undefined },
    ]);
    expect(await announcedBy(() => h.api('POST', `/api/destinations/${id}/test`, { body: {} }))).to.deep.equal([]);
    expect(await announcedBy(() => h.api('DELETE', `/api/destinations/${id}`))).to.deep.equal([
      { kind: 'destination', action: 'deleted', id, orgId: undefined },
    ]);
  });

  it("announces a source's secret rotation as rotated, and a refused write as nothing", async () => {
    let id = '';
    await announcedBy(async () => (id = await createdId(h.api, '/api/sources', { name: 'Rotating', slug: 'rotating', provider: 'payments' })));
    expect(await announcedBy(() => h.api('POST', `/api/sources/${id}/rotate-secret`))).to.deep.equal([
      { kind: 'source', action: 'rotated', id, orgId: undefined },
    ]);
    expect(await announcedBy(() => h.api('PATCH', `/api/sources/${id}`, { body: { slug: 'renamed' } }))).to.deep.equal([]);
  });

  it('announces a revoked key, so every process stops taking it', async () => {
    const key = await createdId(h.api, '/api/keys', { name: 'short-lived', scope: 'read' });
    expect(await announcedBy(() => h.api('DELETE', `/api/keys/${key}`))).to.deep.equal([{ kind: 'key', action: 'deleted', id: key, orgId: undefined }]);
  });
});
