import { expect } from 'chai';
import { loadConfig } from '../../libs/config/config.js';
import { planLimits } from '../../libs/config/plan-limits.js';
import { createSecretBox } from '../../libs/secrets/secret-box.js';
import { openStoreFixture, sourceRow, type StoreFixture } from '../../libs/testing/store-fixtures.js';
import { STORE_TARGETS } from '../../libs/testing/store-targets.js';
import { createSourceResolver, type SourceResolverOptions } from './source-resolver.js';

const sqlite = STORE_TARGETS.find((target) => target.name === 'sqlite')!;
const MB = 1024 * 1024;

describe('createSourceResolver plan limits', function () {
  let fixture: StoreFixture;
  let enterpriseSlug: string;
  let enterpriseSource: string;
  let proSource: string;

  before(async function () {
    fixture = await openStoreFixture(this, sqlite);
    const { store } = fixture;
    const enterprise = await store.organizations.create('enterprise-org', 'enterprise');
    enterpriseSlug = enterprise.slug;
    enterpriseSource = (await store.sources.insert(sourceRow(enterprise.id))).slug;
    proSource = (await fixture.createSource()).slug;
  });

  after(async () => {
    await fixture?.close();
  });

  const resolver = (limits?: SourceResolverOptions['limits']) =>
    createSourceResolver({
      lookup: {
        organizationBySlug: (slug) => fixture.store.organizations.bySlug(slug),
        sourceBySlug: (orgId, slug) => fixture.store.sources.findOneBy(orgId, { slug }),
      },
      secrets: createSecretBox(Buffer.alloc(32, 1)),
      limits,
    });

  const configured = () =>
    planLimits(loadConfig({ RELAY_ENTERPRISE_REQUESTS_PER_SECOND: '250000', RELAY_ENTERPRISE_MAX_PAYLOAD_BYTES: String(40 * MB) }));

  it("gives an enterprise organization's source the limits the operator configured", async function () {
    const resolved = await resolver(configured()).get(enterpriseSlug, enterpriseSource);
    expect(resolved!.limits).to.deep.equal({ maxPayloadBytes: 40 * MB, requestsPerSecond: 250_000 });
  });

  it("keeps another plan's source at its fixed limits when enterprise's are configured", async function () {
    const resolved = await resolver(configured()).get(fixture.org.slug, proSource);
    expect(resolved!.limits).to.deep.equal({ maxPayloadBytes: 5 * MB, requestsPerSecond: 500 });
  });

  it('without configured limits, gives an enterprise source the defaults of the configuration', async function () {
    const resolved = await resolver().get(enterpriseSlug, enterpriseSource);
    expect(resolved!.limits).to.deep.equal({ maxPayloadBytes: 10 * MB, requestsPerSecond: 10_000 });
    expect(resolved!.limits).to.deep.equal(planLimits(loadConfig({})).enterprise);
  });
});
