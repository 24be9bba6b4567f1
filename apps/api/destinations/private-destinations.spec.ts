import { expect } from 'chai';
import { startApiHarness, type ApiHarness } from '../../../testing/api-harness.js';
import { createDestination } from '../../../testing/event-fixtures.js';
import { describeEachStore } from '../../../libs/testing/store-targets.js';

/** A public name that does not resolve here: accepted at save time (the connect-time guard judges it later). */
const PUBLIC_URL = 'https://hooks.example.com/in';

function expectRefused(response: { status: number; body: any; text: string }) {
  expect(response.status, response.text).to.equal(400);
  expect(response.body).to.include({ error: 'Bad Request', code: 'PRIVATE_DESTINATION' });
  expect(response.body.message).to.include('RELAY_BLOCK_PRIVATE_DESTINATIONS');
  expect(response.body.details).to.deep.equal([{ field: 'url', message: response.body.message.replace(/^url: /, '') }]);
}

describeEachStore('Private destinations', (target) => {
  describe('by default (RELAY_BLOCK_PRIVATE_DESTINATIONS unset)', () => {
    let h: ApiHarness;
    before(async function () {
      h = await startApiHarness(this, target, { env: { RELAY_BLOCK_PRIVATE_DESTINATIONS: undefined } });
    });
    after(async () => h?.stop());

    for (const url of ['http://127.0.0.1:8080/internal', 'http://localhost:9000/', 'http://[::1]/', 'http://10.0.0.5/hook', 'http://192.168.1.1/']) {
      it(`refuses to create a destination at ${url}, and creates nothing`, async () => {
        expectRefused(await h.api('POST', '/api/destinations', { body: { name: 'Internal', url } }));
        expect((await h.api('GET', '/api/destinations')).body.data.map((d: { url: string }) => d.url)).not.to.include(url);
      });
    }

    it('refuses to change a destination’s url to a loopback address, and keeps the old one', async () => {
      const destination = await createDestination(h, { name: 'Public', url: PUBLIC_URL });
      expectRefused(await h.api('PATCH', `/api/destinations/${destination.id}`, { body: { url: 'http://127.0.0.1:6379/' } }));
      expect((await h.api('GET', `/api/destinations/${destination.id}`)).body.url).to.equal(PUBLIC_URL);
      const renamed = await h.api('PATCH', `/api/destinations/${destination.id}`, { body: { name: 'Still public' } });
      expect(renamed.status, renamed.text).to.equal(200);
    });

    it('fails an imported entry at a private address, in the validation and in the import, and imports the others', async () => {
      const entries = [
        { name: 'Inside', slug: 'inside', url: 'http://127.0.0.1:8080/internal' },
        { name: 'Outside', slug: 'outside', url: PUBLIC_URL },
      ];
      const preview = await h.api('POST', '/api/destinations/import', { body: { destinations: entries, conflictStrategy: 'skip', validateOnly: true } });
      expect(preview.status, preview.text).to.equal(200);
      expect(preview.body.validationResults.map((r: { status: string }) => r.status)).to.deep.equal(['error', 'valid']);
      expect(preview.body.validationResults[0].errors[0]).to.match(/^url: 127\.0\.0\.1 .*RELAY_BLOCK_PRIVATE_DESTINATIONS/);
      const imported = await h.api('POST', '/api/destinations/import', { body: { destinations: entries, conflictStrategy: 'skip' } });
      expect(imported.body).to.deep.include({ success: false, summary: { imported: 1, skipped: 0, overwritten: 0, failed: 1 } });
      expect(imported.body.details.failed).to.deep.equal(['Inside']);
    });

    it('creates a destination at a public address', async () => {
      const response = await h.api('POST', '/api/destinations', { body: { name: 'Public too', url: 'https://93.184.215.14/in' } });
      expect(response.status, response.text).to.equal(201);
    });
  });

  describe('with RELAY_BLOCK_PRIVATE_DESTINATIONS=false', () => {
    let h: ApiHarness;
    before(async function () {
      h = await startApiHarness(this, target, { env: { RELAY_BLOCK_PRIVATE_DESTINATIONS: 'false' } });
    });
    after(async () => h?.stop());

    it('creates a destination at a loopback address', async () => {
      const response = await h.api('POST', '/api/destinations', { body: { name: 'Local', url: 'http://127.0.0.1:8080/hook' } });
      expect(response.status, response.text).to.equal(201);
    });

    it('still refuses cloud metadata addresses, at create and at update', async () => {
      const refused = await h.api('POST', '/api/destinations', { body: { name: 'Metadata', url: 'http://169.254.169.254/latest/meta-data/' } });
      expectRefused(refused);
      expect(refused.body.message).to.include('metadata');
      const destination = await createDestination(h, { name: 'Fine', url: PUBLIC_URL });
      expectRefused(await h.api('PATCH', `/api/destinations/${destination.id}`, { body: { url: 'http://[fd00:ec2::254]/' } }));
    });
  });
});
