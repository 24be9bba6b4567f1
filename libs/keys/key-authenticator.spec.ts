import { expect } from 'chai';
import { openStoreFixture, type StoreFixture } from '../testing/store-fixtures.js';
import { describeEachStore } from '../testing/store-targets.js';
import { createKeyAuthenticator, type KeyAuthenticator } from './key-authenticator.js';

const MINUTE = 60_000;

describeEachStore('key authenticator', (target) => {
  let fixture: StoreFixture;
  let clock: number;
  const authenticator = (): KeyAuthenticator =>
    createKeyAuthenticator({ keys: fixture.store.apiKeys, organizations: fixture.store.organizations, now: () => clock });
  const lastUsedAt = async (id: string) => (await fixture.store.apiKeys.get(fixture.org.id, id))!.lastUsedAt;

  before(async function () {
    fixture = await openStoreFixture(this, target);
  });

  beforeEach(() => {
    clock = 1_800_000_000_000;
  });

  after(async () => {
    await fixture?.close();
  });

  it("resolves a key to its id, organization and scope, and anything else to null", async () => {
    const { row, key } = await fixture.store.apiKeys.create(fixture.org.id, 'reader', 'read');
    const keys = authenticator();
    expect(await keys.authenticate(key)).to.deep.include({ keyId: row.id, scope: 'read' });
    expect((await keys.authenticate(key))!.org.id).to.equal(fixture.org.id);
    expect(await keys.authenticate(`${key}x`)).to.equal(null);
    expect(await keys.authenticate(key.slice(0, -1))).to.equal(null);
  });

  it('records a use at most once a minute per key, however many requests and processes', async () => {
    const { row, key } = await fixture.store.apiKeys.create(fixture.org.id, 'busy', 'write');
    const [one, two] = [authenticator(), authenticator()];
    await one.authenticate(key);
    expect(await lastUsedAt(row.id)).to.equal(clock);
    const first = clock;
    clock += 30_000;
    for (let request = 0; request < 20; request += 1) await (request % 2 ? one : two).authenticate(key);
    expect(await lastUsedAt(row.id), 'within the minute, neither process writes again').to.equal(first);
    clock = first + MINUTE;
    await two.authenticate(key);
    await one.authenticate(key);
    expect(await lastUsedAt(row.id)).to.equal(first + MINUTE);
  });

  it('forget() makes a revoked key fail at once, while other keys stay cached', async () => {
    const revoked = await fixture.store.apiKeys.create(fixture.org.id, 'revoked', 'admin');
    const kept = await fixture.store.apiKeys.create(fixture.org.id, 'kept', 'admin');
    const keys = authenticator();
    await keys.authenticate(revoked.key);
    await keys.authenticate(kept.key);
    expect(await fixture.store.apiKeys.revoke(fixture.org.id, revoked.row.id)).to.equal('revoked');
    expect(await keys.authenticate(revoked.key), 'cached until the announcement').not.to.equal(null);
    keys.forget(revoked.row.id);
    expect(await keys.authenticate(revoked.key)).to.equal(null);
    expect(await keys.authenticate(kept.key)).not.to.equal(null);
  });

  it('reads a cached key again after its time to live, so a revocation nobody announced ends too', async () => {
    const { row, key } = await fixture.store.apiKeys.create(fixture.org.id, 'cli-revoked', 'admin');
    const keys = authenticator();
    await keys.authenticate(key);
    await fixture.store.apiKeys.revoke(fixture.org.id, row.id);
    clock += 29_000;
    expect(await keys.authenticate(key)).not.to.equal(null);
    clock += 1_000;
    expect(await keys.authenticate(key)).to.equal(null);
  });

  it('does not cache a key read before a revocation announced while the read was under way', async () => {
    const { row, key } = await fixture.store.apiKeys.create(fixture.org.id, 'racing', 'admin');
    const keys = authenticator();
    const pending = keys.authenticate(key);
    keys.forget(row.id);
    expect(await pending, 'this request started before the revocation').not.to.equal(null);
    await fixture.store.apiKeys.revoke(fixture.org.id, row.id);
    expect(await keys.authenticate(key)).to.equal(null);
  });

  it("refuses to revoke an organization's last admin key, also when two revocations race", async () => {
    const org = await fixture.store.organizations.create('two-admins', 'pro');
    const a = await fixture.store.apiKeys.create(org.id, 'a', 'admin');
    const b = await fixture.store.apiKeys.create(org.id, 'b', 'admin');
    const outcomes = await Promise.all([fixture.store.apiKeys.revoke(org.id, a.row.id), fixture.store.apiKeys.revoke(org.id, b.row.id)]);
    expect(outcomes).to.have.members(['revoked', 'last_admin']);
    expect((await fixture.store.apiKeys.findBy(org.id)).filter((k) => k.scope === 'admin')).to.have.length(1);
  });
});
