import { expect } from 'chai';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { loadConfig, type Config } from '../../libs/config/config.js';
import { RelayError } from '../../libs/errors/errors.js';
import { openStore, type Store } from '../../libs/store/store.js';
import { describeEachStore, type StoreLocation } from '../../libs/testing/store-targets.js';
import { runCli, STACK_FRAME } from '../../libs/testing/cli-runner.js';
import { PROGRESS_THRESHOLD, progressBar } from './progress-bar.js';
import { transferCommands } from './transfer-commands.js';

/** Configuration as code: a file written by hand, secrets included. */
const SOURCES_FILE = {
  sources: [
    { name: 'Code host', slug: 'codehost', provider: 'codehost', signingSecret: 'cli-codehost-secret', rejectInvalidSignatures: true },
    {
      name: 'Custom',
      slug: 'custom',
      provider: 'custom',
      signingSecret: 'cli-hmac-secret',
      verificationConfig: { type: 'hmac', algorithm: 'sha256', header: 'X-Signature', encoding: 'hex', prefix: '' },
    },
    { name: 'Plain', slug: 'plain', isActive: false },
  ],
};

const DESTINATIONS_FILE = {
  destinations: [{ name: 'Orders', slug: 'orders', url: 'https://example.test/orders', authType: 'bearer', authConfig: { token: 'cli-token' } }],
};

describeEachStore('relay export / relay import', (target) => {
  let location: StoreLocation & { cleanup(): Promise<void> };
  const cli = (...args: string[]) => runCli(location, args);
  // The files a user imports and exports live apart from the relay's data directory, which the relay keeps private.
  let workDir: string;
  const file = (name: string) => path.join(workDir, name);

  async function ok(...args: string[]): Promise<string> {
    const result = await cli(...args);
    expect(result.code, `relay ${args.join(' ')}: ${result.stderr}${result.stdout}`).to.equal(0);
    // Piped output: no progress bar, no noise.
    expect(result.stderr).to.equal('');
    return result.stdout;
  }

  before(async function () {
    location = await target.prepare(this);
    workDir = await mkdtemp(path.join(os.tmpdir(), 'relay-cli-files-'));
    await ok('orgs', 'create', '--slug', 'acme');
    await ok('orgs', 'create', '--slug', 'beta');
    await writeFile(file('sources.json'), JSON.stringify(SOURCES_FILE));
    await writeFile(file('destinations.json'), JSON.stringify(DESTINATIONS_FILE));
  });

  after(async () => {
    await location?.cleanup();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('imports a hand-written file, exports it again with its secrets, and another organization imports the export', async () => {
    const seeded = JSON.parse(await ok('import', 'sources', '--org', 'acme', '--file', file('sources.json'), '--strategy', 'skip'));
    expect(seeded).to.deep.include({ success: true, summary: { imported: 3, skipped: 0, overwritten: 0, failed: 0 } });

    const message = await ok('export', 'sources', '--org', 'acme', '--include-sensitive', '--out', file('acme-sources.json'));
    expect(message.trim()).to.equal(`exported 3 sources of acme to ${file('acme-sources.json')}`);
    // Secrets in clear: readable by the owner only.
    expect((await stat(file('acme-sources.json'))).mode & 0o777).to.equal(0o600);
    const envelope = JSON.parse(await readFile(file('acme-sources.json'), 'utf8'));
    expect(envelope).to.include({ version: '1.0', organizationSlug: 'acme' });
    expect(envelope.sources.map((s: { slug: string; signingSecret: string | null }) => [s.slug, s.signingSecret])).to.deep.equal([
      ['codehost', 'cli-codehost-secret'],
      ['custom', 'cli-hmac-secret'],
      ['plain', null],
    ]);

    const predicted = JSON.parse(await ok('import', 'sources', '--org', 'beta', '--file', file('acme-sources.json'), '--strategy', 'rename', '--validate-only'));
    expect(predicted.summary).to.deep.equal({ total: 3, toCreate: 3, toOverwrite: 0, toSkip: 0, errors: 0 });
    expect(JSON.parse(await ok('export', 'sources', '--org', 'beta')).sources).to.deep.equal([]);

    const imported = JSON.parse(await ok('import', 'sources', '--org', 'beta', '--file', file('acme-sources.json'), '--strategy', 'rename'));
    expect(imported.results).to.deep.equal(predicted.validationResults);
    const beta = JSON.parse(await ok('export', 'sources', '--org', 'beta', '--include-sensitive'));
    expect(beta.organizationSlug).to.equal('beta');
    expect(beta.sources).to.deep.equal(envelope.sources);
  });

  it('exports destinations with credentials redacted unless asked, and imports them', async () => {
    await ok('import', 'destinations', '--org', 'acme', '--file', file('destinations.json'), '--strategy', 'overwrite');
    const redacted = JSON.parse(await ok('export', 'destinations', '--org', 'acme'));
    expect(redacted.destinations[0]).to.include({ slug: 'orders', authType: 'bearer', authConfig: '***REDACTED***' });
    const sensitive = JSON.parse(await ok('export', 'destinations', '--org', 'acme', '--include-sensitive'));
    expect(sensitive.destinations[0].authConfig).to.deep.equal({ token: 'cli-token' });
  });

  it('an import with failed entries prints the result and exits 1; the valid entries are imported', async () => {
    await writeFile(file('mixed.json'), JSON.stringify({ sources: [{ name: 'Fine', slug: 'fine' }, { name: 'Bad', slug: 'Bad Slug' }] }));
    const result = await cli('import', 'sources', '--org', 'acme', '--file', file('mixed.json'), '--strategy', 'skip');
    expect(result.code).to.equal(1);
    const body = JSON.parse(result.stdout);
    expect(body.details).to.deep.equal({ imported: ['Fine'], skipped: [], overwritten: [], failed: ['Bad'] });
    expect(body.results[1].errors.join(' ')).to.include('slug');
  });

  describe('refusals (in process, same store)', () => {
    let store: Store;
    let config: Config;

    before(async () => {
      config = loadConfig({ RELAY_DATA_DIR: location.dataDir, DATABASE_URL: location.databaseUrl });
      store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    });

    after(async () => {
      await store?.close();
    });

    const refusals: [string, string, Record<string, string | boolean>, RegExp][] = [
      ['no --file', 'import sources', { strategy: 'skip' }, /--file is required/],
      ['no --strategy', 'import sources', { file: 'sources.json' }, /--strategy must be one of skip, rename, overwrite/],
      ['an unknown --strategy', 'import destinations', { file: 'sources.json', strategy: 'merge' }, /--strategy must be one of/],
      ['a file that does not exist', 'import sources', { file: 'missing.json', strategy: 'skip' }, /cannot be read \(ENOENT\)/],
      ['a file that is not JSON', 'import sources', { file: 'broken.json', strategy: 'skip' }, /is not valid JSON/],
      ['a file that holds a list', 'import sources', { file: 'list.json', strategy: 'skip' }, /must hold a JSON object/],
      ['a file of the other kind', 'import destinations', { file: 'sources.json', strategy: 'skip' }, /destinations: .*sources: Unknown field/],
      ['an unknown organization', 'export sources', { org: 'nobody' }, /"nobody" does not exist/],
    ];
    for (const [what, command, flags, reason] of refusals) {
      it(`${command}: ${what}`, async () => {
        await writeFile(file('broken.json'), '{"sources": [');
        await writeFile(file('list.json'), '[]');
        const resolved = typeof flags.file === 'string' ? { ...flags, file: file(flags.file) } : flags;
        const error = await transferCommands[command]!(store, { org: 'acme', ...resolved }, config).then(
          () => expect.fail('expected a refusal'),
          (e: unknown) => e,
        );
        expect(error).to.be.instanceOf(RelayError);
        expect((error as Error).message).to.match(reason);
      });
    }

    it('the same refusal from the real command line: exit 1, one line on stderr, no stack trace', async () => {
      const result = await cli('import', 'sources', '--org', 'acme', '--file', file('sources.json'));
      expect(result.code).to.equal(1);
      expect(result.stderr).to.match(/^relay: --strategy must be one of skip, rename, overwrite\n$/);
      expect(result.stderr).not.to.include(STACK_FRAME);
    });
  });
});

describe('progressBar', () => {
  /** A terminal-like sink: cli-progress draws only on a TTY. */
  function terminal() {
    const sink = Object.assign(new Writable({ write: (chunk, _encoding, done) => ((sink.text += String(chunk)), done()) }), {
      isTTY: true,
      columns: 100,
      text: '',
    });
    return sink;
  }

  it('draws one bar per phase of a large import', () => {
    const sink = terminal();
    const bar = progressBar(sink);
    const total = PROGRESS_THRESHOLD + 50;
    for (let done = 1; done <= total; done += 1) bar.listener({ phase: 'checking', done, total });
    bar.listener({ phase: 'writing', done: total, total });
    bar.stop();
    expect(sink.text).to.include(`checking  [`).and.include(`writing   [`).and.include(`${total}/${total}`);
  });

  it('stays quiet for a small file', () => {
    const sink = terminal();
    const bar = progressBar(sink);
    bar.listener({ phase: 'checking', done: 1, total: PROGRESS_THRESHOLD - 1 });
    bar.stop();
    expect(sink.text).to.equal('');
  });
});
