import { expect } from 'chai';
import { apiClient } from '../../../testing/api-client.js';
import { describeEachStore } from '../../../libs/testing/store-targets.js';
import { created, startApiHarness, type ApiHarness } from '../../../testing/api-harness.js';

type Kind = 'sources' | 'destinations';
type Entry = Record<string, unknown>;
type Strategy = 'skip' | 'rename' | 'overwrite';

interface EntryResult {
  index: number;
  name: string | null;
  slug: string | null;
  status: string;
  errors: string[];
  warnings: string[];
  renamedTo?: string;
}

/** What each planned status becomes in the import response (SPEC 4.5 `details`). */
const OUTCOME_OF: Record<string, 'imported' | 'skipped' | 'overwritten' | 'failed'> = {
  valid: 'imported',
  renamed: 'imported',
  overwrite: 'overwritten',
  skip: 'skipped',
  error: 'failed',
};

/** Per kind: what exists before, and a file of new, conflicting and invalid entries. */
const MIX: Record<Kind, { existing(p: string): Entry[]; file(p: string): Entry[]; expected: Record<Strategy, string[]> }> = {
  sources: {
    existing: (p) => [
      { name: 'Old Alpha', slug: `${p}-alpha`, description: 'before' },
      { name: 'Old Beta', slug: `${p}-beta` },
    ],
    file: (p) => [
      { name: 'Gamma', slug: `${p}-gamma` },
      { name: 'New Alpha', slug: `${p}-alpha`, description: 'after', rateLimitPerMinute: 60 },
      // New, and asks for the slug a rename of alpha would otherwise take.
      { name: 'Alpha One', slug: `${p}-alpha-1` },
      { name: 'Bad Slug', slug: 'Not A Slug' },
      // Conflicting and invalid: checked whatever the strategy (an allowlist needs addresses).
      { name: 'Bad Beta', slug: `${p}-beta`, ipFilterMode: 'allowlist' },
      { name: 'Typo', slug: `${p}-typo`, enabled: true },
    ],
    expected: {
      skip: ['valid', 'skip', 'valid', 'error', 'error', 'error'],
      rename: ['valid', 'renamed', 'valid', 'error', 'error', 'error'],
      overwrite: ['valid', 'overwrite', 'valid', 'error', 'error', 'error'],
    },
  },
  destinations: {
    existing: (p) => [
      { name: 'Old Alpha', slug: `${p}-alpha`, url: 'https://example.test/old', description: 'before' },
      { name: 'Old Beta', slug: `${p}-beta`, url: 'https://example.test/beta' },
    ],
    file: (p) => [
      { name: 'Gamma', slug: `${p}-gamma`, url: 'https://example.test/gamma' },
      { name: 'New Alpha', slug: `${p}-alpha`, url: 'https://example.test/new', description: 'after', timeoutMs: 5000 },
      { name: 'Alpha One', slug: `${p}-alpha-1`, url: 'https://example.test/one' },
      { name: 'Bad Url', slug: `${p}-bad-url`, url: 'ftp://example.test/x' },
      // Conflicting and invalid: bearer needs a token.
      { name: 'Bad Beta', slug: `${p}-beta`, url: 'https://example.test/beta', authType: 'bearer', authConfig: {} },
      { name: 'Typo', slug: `${p}-typo`, url: 'https://example.test/typo', enabled: true },
    ],
    expected: {
      skip: ['valid', 'skip', 'valid', 'error', 'error', 'error'],
      rename: ['valid', 'renamed', 'valid', 'error', 'error', 'error'],
      overwrite: ['valid', 'overwrite', 'valid', 'error', 'error', 'error'],
    },
  },
};

describeEachStore('POST /api/sources/import and /api/destinations/import', (target) => {
  let h: ApiHarness;

  before(async function () {
    h = await startApiHarness(this, target);
  });

  after(async () => {
    await h?.stop();
  });

  const create = (kind: Kind, body: Entry) => created(h.api, `/api/${kind}`, body);

  /** Everything the organization has of a kind, secrets included: "changes nothing" compares these. */
  async function snapshot(kind: Kind): Promise<Entry[]> {
    const response = await h.api('GET', `/api/${kind}/export?includeSensitive=true`);
    expect(response.status).to.equal(200);
    return response.body[kind];
  }

  async function bySlug(kind: Kind, slug: string): Promise<Entry | undefined> {
    return (await snapshot(kind)).find((entry) => entry.slug === slug);
  }

  const importing = (kind: Kind, body: unknown) => h.api('POST', `/api/${kind}/import`, { body });

  for (const kind of ['sources', 'destinations'] as const) {
    describe(`${kind}: each strategy on new, conflicting and invalid entries`, () => {
      for (const strategy of ['skip', 'rename', 'overwrite'] as const) {
        it(`${strategy}: validateOnly writes nothing and predicts exactly what the import then does`, async () => {
          const p = `${strategy}-mix`;
          for (const entry of MIX[kind].existing(p)) await create(kind, entry);
          const file = MIX[kind].file(p);
          const before = await snapshot(kind);

          const validation = await importing(kind, { [kind]: file, conflictStrategy: strategy, validateOnly: true });
          expect(validation.status, validation.text).to.equal(200);
          const results: EntryResult[] = validation.body.validationResults;
          expect(results.map((r) => r.status)).to.deep.equal(MIX[kind].expected[strategy]);
          expect(results.map((r) => [r.index, r.name, r.slug])).to.deep.equal(file.map((e, i) => [i, e.name, e.slug]));
          for (const result of results) expect(result.errors.length > 0, JSON.stringify(result)).to.equal(result.status === 'error');
          expect(validation.body.valid).to.equal(false);
          expect(validation.body.summary).to.deep.equal({
            total: 6,
            toCreate: strategy === 'rename' ? 3 : 2,
            toOverwrite: strategy === 'overwrite' ? 1 : 0,
            toSkip: strategy === 'skip' ? 1 : 0,
            errors: 3,
          });
          expect(await snapshot(kind)).to.deep.equal(before);

          const imported = await importing(kind, { [kind]: file, conflictStrategy: strategy });
          expect(imported.status, imported.text).to.equal(200);
          // The prediction, entry by entry, is the outcome.
          const predicted = { imported: [] as string[], skipped: [] as string[], overwritten: [] as string[], failed: [] as string[] };
          for (const result of results) predicted[OUTCOME_OF[result.status]!].push(result.name!);
          expect(imported.body.details).to.deep.equal(predicted);
          expect(imported.body.summary).to.deep.equal({
            imported: predicted.imported.length,
            skipped: predicted.skipped.length,
            overwritten: predicted.overwritten.length,
            failed: predicted.failed.length,
          });
          expect(imported.body.success).to.equal(false);
          expect(imported.body.results).to.deep.equal(results);

          // And the store shows it.
          const after = await snapshot(kind);
          const slugsAfter = after.map((e) => e.slug);
          expect(slugsAfter).to.include.members([`${p}-gamma`, `${p}-alpha-1`]);
          expect(slugsAfter).not.to.include(`${p}-typo`);
          expect((await bySlug(kind, `${p}-beta`))!.name).to.equal('Old Beta');
          const alpha = (await bySlug(kind, `${p}-alpha`))!;
          if (strategy === 'overwrite') {
            expect(alpha).to.include({ name: 'New Alpha', description: 'after' });
          } else {
            expect(alpha).to.include({ name: 'Old Alpha', description: 'before' });
          }
          if (strategy === 'rename') {
            expect(results[1]!.renamedTo).to.equal(`${p}-alpha-2`);
            expect((await bySlug(kind, `${p}-alpha-2`))!.name).to.equal('New Alpha');
          }
          expect(after.length - before.length).to.equal(predicted.imported.length);
        });
      }
    });
  }

  describe('entries', () => {
    it('an invalid entry says which fields are at fault', async () => {
      const response = await importing('sources', {
        sources: [
          { name: 'A', slug: 'entry-a', isActive: 'yes', dedupWindowHours: 500 },
          { name: 'B', slug: 'entry-b', verificationConfig: { type: 'hmac', secret: 'inline', algorithm: 'sha256', header: 'X-Sig', encoding: 'hex' } },
          { name: 'C', slug: 'entry-c', provider: 'generic', signingSecret: 'a-secret-for-nothing' },
          { name: 'D', slug: 'entry-d', verificationConfig: { type: 'standard' }, signingSecret: 'not base64 !' },
          { slug: 'entry-e' },
        ],
        conflictStrategy: 'skip',
        validateOnly: true,
      });
      expect(response.status).to.equal(200);
      const errors = response.body.validationResults.map((r: EntryResult) => r.errors.join(' | '));
      expect(errors[0]).to.match(/isActive: /).and.match(/dedupWindowHours: /);
      expect(errors[1]).to.match(/verificationConfig\.secret: must be left out/);
      expect(errors[2]).to.match(/signingSecret: must be left out or null/);
      expect(errors[3]).to.match(/signingSecret: must be whsec_/);
      expect(errors[4]).to.match(/name: /);
      expect(response.body.validationResults[4].name).to.equal(null);
    });

    it('rename takes the first free numeric suffix', async () => {
      for (const slug of ['gh', 'gh-1', 'gh-3']) await create('sources', { name: slug, slug });
      const response = await importing('sources', { sources: [{ name: 'Renamed', slug: 'gh' }], conflictStrategy: 'rename' });
      expect(response.body.results[0]).to.include({ status: 'renamed', renamedTo: 'gh-2' });
      expect((await bySlug('sources', 'gh-2'))!.name).to.equal('Renamed');
    });

    it('a destination entry without a slug is matched by the slug derived from its name', async () => {
      await create('destinations', { name: 'Billing Hooks', url: 'https://example.test/billing' });
      const response = await importing('destinations', {
        destinations: [{ name: 'Billing Hooks', url: 'https://example.test/new-billing' }],
        conflictStrategy: 'overwrite',
      });
      expect(response.body.results[0]).to.include({ status: 'overwrite', slug: 'billing-hooks' });
      expect((await bySlug('destinations', 'billing-hooks'))!.url).to.equal('https://example.test/new-billing');
    });

    it('an overwrite keeps what the pipeline owns: the id, the webhook URL and the creation time', async () => {
      const created = await create('sources', { name: 'Kept', slug: 'kept-identity' });
      await importing('sources', { sources: [{ name: 'Kept Renamed', slug: 'kept-identity' }], conflictStrategy: 'overwrite' });
      const fetched = (await h.api('GET', `/api/sources/${created.id}`)).body;
      expect(fetched).to.include({ id: created.id, name: 'Kept Renamed', webhookUrl: created.webhookUrl, createdAt: created.createdAt });
    });

    it('an empty list is a valid import of nothing', async () => {
      const response = await importing('sources', { sources: [], conflictStrategy: 'skip' });
      expect(response.status).to.equal(200);
      expect(response.body).to.deep.include({ success: true, summary: { imported: 0, skipped: 0, overwritten: 0, failed: 0 } });
    });
  });

  describe('bad requests: 400 for the request as a whole, and nothing changes', () => {
    /** A valid entry of either kind, so that only the fault under test is at fault. */
    const entry = (kind: Kind, slug: string) => (kind === 'sources' ? { name: slug, slug } : { name: slug, slug, url: 'https://example.test/x' });
    const thousandAndOne = (kind: Kind) => Array.from({ length: 1001 }, (_, i) => entry(kind, `many-${i}`));
    const cases: [string, (kind: Kind) => unknown, string][] = [
      ['a wrong version', (kind) => ({ version: '2.0', [kind]: [entry(kind, 'bad-version')], conflictStrategy: 'skip' }), 'version'],
      ['no conflictStrategy', (kind) => ({ [kind]: [entry(kind, 'no-strategy')] }), 'conflictStrategy'],
      ['an unknown conflictStrategy', (kind) => ({ [kind]: [entry(kind, 'merge')], conflictStrategy: 'merge' }), 'conflictStrategy'],
      ['no entries', () => ({ conflictStrategy: 'skip' }), '(kind)'],
      ['entries that are not a list', (kind) => ({ [kind]: entry(kind, 'not-a-list'), conflictStrategy: 'skip' }), '(kind)'],
      ['an entry that is not an object', (kind) => ({ [kind]: [entry(kind, 'fine-one'), 'github', null, []], conflictStrategy: 'skip' }), '(kind)[1]'],
      ['the same slug twice in one file', (kind) => ({ [kind]: [entry(kind, 'twice'), entry(kind, 'once'), entry(kind, 'twice')], conflictStrategy: 'overwrite' }), '(kind)[2].slug'],
      ['1001 entries', (kind) => ({ [kind]: thousandAndOne(kind), conflictStrategy: 'skip' }), '(kind)'],
      ['an unknown top-level field', (kind) => ({ [kind]: [entry(kind, 'extra')], conflictStrategy: 'skip', dryRun: true }), 'dryRun'],
      ['validateOnly that is not a boolean', (kind) => ({ [kind]: [entry(kind, 'vo')], conflictStrategy: 'skip', validateOnly: 'yes' }), 'validateOnly'],
      ['a body that is a list', (kind) => [entry(kind, 'listed')], '(body)'],
    ];
    for (const kind of ['sources', 'destinations'] as const) {
      for (const [what, body, field] of cases) {
        for (const validateOnly of [false, true]) {
          it(`${kind}: ${what}${validateOnly ? ' (validateOnly)' : ''}`, async () => {
            const before = await snapshot(kind);
            let request = body(kind);
            // The same request as a dry run, unless it is the bad validateOnly itself.
            if (validateOnly && request !== null && typeof request === 'object' && !Array.isArray(request)) request = { validateOnly: true, ...request };
            const response = await importing(kind, request);
            expect(response.status, response.text).to.equal(400);
            expect(response.body.code).to.equal('VALIDATION_ERROR');
            expect(response.body.details.map((d: { field: string }) => d.field)).to.include(field.replace('(kind)', kind));
            expect(await snapshot(kind)).to.deep.equal(before);
          });
        }
      }
    }

    it('a destinations file posted to the sources import is refused, naming both keys', async () => {
      const response = await importing('sources', { destinations: [entry('destinations', 'wrong-kind')], conflictStrategy: 'skip' });
      expect(response.status).to.equal(400);
      expect(response.body.details.map((d: { field: string }) => d.field)).to.include.members(['sources', 'destinations']);
    });
  });

  describe('one transaction', () => {
    const REFUSED_SLUG = 'tx-refused';
    const RACED_SLUG = 'tx-raced';

    /** Real database faults in the middle of the write: a trigger refuses one row, or creates its slug first. */
    async function installTriggers(): Promise<void> {
      const db = h.relay.store.dataSource;
      if (h.relay.store.kind === 'sqlite') {
        await db.query(`CREATE TRIGGER refuse_row BEFORE INSERT ON sources WHEN NEW.slug = '${REFUSED_SLUG}' BEGIN SELECT RAISE(ABORT, 'refused by the test trigger'); END`);
        await db.query(
          `CREATE TRIGGER race_row BEFORE INSERT ON sources WHEN NEW.slug = '${RACED_SLUG}' AND NEW.id <> 'src_race' BEGIN
             INSERT INTO sources (id, org_id, name, slug, description, provider, verification, secret_sealed,
               reject_invalid_signatures, rate_limit_per_minute, ip_filter_mode, ip_allowlist, ip_denylist, encrypt_fields, mask_fields,
               dedup_enabled, dedup_strategy, dedup_window_hours, dedup_custom_header, enabled, last_event_at, created_at, updated_at)
             SELECT 'src_race', org_id, name, NEW.slug, description, provider, verification, secret_sealed,
               reject_invalid_signatures, rate_limit_per_minute, ip_filter_mode, ip_allowlist, ip_denylist, encrypt_fields, mask_fields,
               dedup_enabled, dedup_strategy, dedup_window_hours, dedup_custom_header, enabled, last_event_at, created_at, updated_at
             FROM sources WHERE org_id = NEW.org_id LIMIT 1;
           END`,
        );
      } else {
        await db.query(`CREATE FUNCTION refuse_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test trigger'; END $$`);
        await db.query(`CREATE TRIGGER refuse_row BEFORE INSERT ON sources FOR EACH ROW WHEN (NEW.slug = '${REFUSED_SLUG}') EXECUTE FUNCTION refuse_row()`);
        await db.query(
          `CREATE FUNCTION race_row() RETURNS trigger LANGUAGE plpgsql AS $$
           DECLARE twin sources%ROWTYPE;
           BEGIN twin := NEW; twin.id := 'src_race'; INSERT INTO sources SELECT (twin).*; RETURN NEW; END $$`,
        );
        await db.query(`CREATE TRIGGER race_row BEFORE INSERT ON sources FOR EACH ROW WHEN (NEW.slug = '${RACED_SLUG}' AND NEW.id <> 'src_race') EXECUTE FUNCTION race_row()`);
      }
    }

    before(async () => {
      await create('sources', { name: 'Before', slug: 'tx-existing' });
      await installTriggers();
    });

    /** An overwrite first, then more rows than one INSERT statement takes, then the faulty row. */
    const file = (lastSlug: string) => [
      { name: `After ${lastSlug}`, slug: 'tx-existing' },
      ...Array.from({ length: 150 }, (_, i) => ({ name: `Row ${i}`, slug: `${lastSlug}-row-${i}` })),
      { name: 'Last', slug: lastSlug },
    ];

    it('when a row fails to write, nothing of the import is written', async () => {
      const before = await snapshot('sources');
      // Unguarded: this one is meant to answer 500.
      const raw = apiClient(h.url, h.keyA);
      const response = await raw('POST', '/api/sources/import', { body: { sources: file(REFUSED_SLUG), conflictStrategy: 'overwrite' } });
      expect(response.status).to.equal(500);
      expect(response.body.code).to.equal('INTERNAL_ERROR');
      expect(await snapshot('sources')).to.deep.equal(before);
    });

    it('when a slug is created concurrently, answers 409 DUPLICATE_SLUG and writes nothing', async () => {
      const before = await snapshot('sources');
      const response = await importing('sources', { sources: file(RACED_SLUG), conflictStrategy: 'overwrite' });
      expect(response.status, response.text).to.equal(409);
      expect(response.body.code).to.equal('DUPLICATE_SLUG');
      expect(response.body.message).to.include('nothing was imported');
      expect(await snapshot('sources')).to.deep.equal(before);
    });
  });
});
