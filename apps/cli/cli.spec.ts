import { expect } from 'chai';
import { loadConfig } from '../../libs/config/config.js';
import { createLogger } from '../../libs/logging/logger.js';
import { apiClient } from '../../testing/api-client.js';
import { describeEachStore, type StoreLocation } from '../../libs/testing/store-targets.js';
import { startRelay } from '../relay/relay.js';
import { runCli, STACK_FRAME } from '../../libs/testing/cli-runner.js';
import { TEST_RELAY_ENV } from '../../libs/testing/test-relay-env.js';

describeEachStore('relay CLI', (target) => {
  let location: StoreLocation & { cleanup(): Promise<void> };
  const cli = (...args: string[]) => runCli(location, args);

  /** A failure: non-zero exit, a one-line reason on stderr that mentions `reason`, no stack trace. */
  async function expectRefused(args: string[], reason: RegExp) {
    const result = await cli(...args);
    expect(result.code, result.stdout + result.stderr).to.be.a('number').and.not.equal(0);
    expect(result.stderr).to.match(reason);
    expect(result.stderr + result.stdout).not.to.include(STACK_FRAME);
    return result;
  }

  before(async function () {
    location = await target.prepare(this);
  });

  after(async () => {
    await location?.cleanup();
  });

  it('migrate applies the migrations to an empty database and exits 0, also when run again', async () => {
    for (let run = 0; run < 2; run += 1) {
      const result = await cli('migrate');
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout).to.include('migrations applied');
    }
  });

  it('orgs create --slug x --plan starter creates the organization', async () => {
    const result = await cli('orgs', 'create', '--slug', 'x', '--plan', 'starter');
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.match(/created organization x \(org_[0-9a-z]{26}, plan starter\)/);
  });

  it('orgs create without --plan uses pro', async () => {
    const result = await cli('orgs', 'create', '--slug', 'second-org');
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.include('plan pro');
  });

  it('orgs list shows every organization with its plan', async () => {
    const result = await cli('orgs', 'list');
    expect(result.code, result.stderr).to.equal(0);
    const rows = result.stdout.trim().split('\n').map((line) => line.split('\t').slice(0, 2));
    expect(rows).to.deep.include(['x', 'starter']);
    expect(rows).to.deep.include(['second-org', 'pro']);
  });

  it('keys create --org x prints a key that authenticates as x against a relay over the same data', async () => {
    const result = await cli('keys', 'create', '--org', 'x');
    expect(result.code, result.stderr).to.equal(0);
    const key = result.stdout.trim().split('\n').at(-1)!;
    expect(key).to.match(/^rk_[A-Za-z0-9_-]{32}$/);

    const config = loadConfig({
      ...TEST_RELAY_ENV,
      PORT: '0',
      HOST: '127.0.0.1',
      RELAY_DATA_DIR: location.dataDir,
      DATABASE_URL: location.databaseUrl,
      RELAY_PUBLIC_URL: 'https://relay.example.test',
    });
    const relay = await startRelay(config, { logger: createLogger({ level: 'silent' }) });
    try {
      const api = apiClient(relay.url, key);
      const created = await api('POST', '/api/sources', { body: { name: 'From the CLI key', slug: 'cli-source' } });
      expect(created.status, created.text).to.equal(201);
      expect(created.body.webhookUrl).to.equal('https://relay.example.test/ingest/x/cli-source');
      expect((await api('GET', '/api/sources')).body.pagination.total).to.equal(1);
      expect((await api('GET', '/api/sources', { key: `${key}x` })).status).to.equal(401);
    } finally {
      await relay.close();
    }
  });

  describe('keys with scopes', function () {
    // Each test runs the CLI several times, a process start each.
    this.timeout(120_000);
    const keyOf = (stdout: string) => stdout.trim().split('\n').at(-1)!;
    const idOf = (stdout: string) => /API key (key_\w+)/.exec(stdout)![1]!;

    before(async () => {
      expect((await cli('orgs', 'create', '--slug', 'scoped')).code).to.equal(0);
    });

    it('keys create --scope read prints a read key; keys list shows it with its scope and prefix, never the key', async () => {
      const result = await cli('keys', 'create', '--org', 'scoped', '--name', 'dashboard', '--scope', 'read');
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout).to.include('scope read');
      const key = keyOf(result.stdout);
      const list = await cli('keys', 'list', '--org', 'scoped');
      expect(list.code, list.stderr).to.equal(0);
      const row = list.stdout.trim().split('\n').map((line) => line.split('\t')).find((fields) => fields[0] === idOf(result.stdout))!;
      expect(row.slice(1, 4)).to.deep.equal(['dashboard', 'read', key.slice(0, 8)]);
      expect(row[5]).to.equal('never');
      expect(list.stdout).not.to.include(key);
    });

    it('keys create without --scope makes an admin key', async () => {
      const result = await cli('keys', 'create', '--org', 'scoped');
      expect(result.stdout).to.include('scope admin');
    });

    it('keys create with an unknown scope or a name over 100 characters exits non-zero and creates nothing', async () => {
      const before = (await cli('keys', 'list', '--org', 'scoped')).stdout;
      await expectRefused(['keys', 'create', '--org', 'scoped', '--scope', 'root'], /scope: must be one of admin, write, read/);
      await expectRefused(['keys', 'create', '--org', 'scoped', '--name', 'n'.repeat(101)], /name: must be at most 100 characters/);
      expect((await cli('keys', 'list', '--org', 'scoped')).stdout).to.equal(before);
    });

    it('keys revoke removes a key; an unknown id and a missing --id are refused', async () => {
      const created = await cli('keys', 'create', '--org', 'scoped', '--scope', 'write');
      const revoked = await cli('keys', 'revoke', '--org', 'scoped', '--id', idOf(created.stdout));
      expect(revoked.code, revoked.stderr).to.equal(0);
      expect((await cli('keys', 'list', '--org', 'scoped')).stdout).not.to.include(idOf(created.stdout));
      await expectRefused(['keys', 'revoke', '--org', 'scoped', '--id', idOf(created.stdout)], /not found/);
      await expectRefused(['keys', 'revoke', '--org', 'scoped'], /--id/);
    });

    it("keys revoke refuses the organization's last admin key", async () => {
      expect((await cli('orgs', 'create', '--slug', 'one-admin')).code).to.equal(0);
      const admin = await cli('keys', 'create', '--org', 'one-admin');
      await expectRefused(['keys', 'revoke', '--org', 'one-admin', '--id', idOf(admin.stdout)], /last admin key/);
    });
  });

  it('orgs create --slug BAD exits non-zero with a message about the slug and creates nothing', async () => {
    await expectRefused(['orgs', 'create', '--slug', 'BAD'], /slug/i);
    expect((await cli('orgs', 'list')).stdout.toLowerCase()).not.to.match(/^bad\t/m);
  });

  it('orgs create with an unknown plan exits non-zero naming the plans', async () => {
    await expectRefused(['orgs', 'create', '--slug', 'gold-org', '--plan', 'gold'], /plan must be one of free, starter, pro, business, enterprise/);
  });

  it('orgs create with a slug already taken exits non-zero saying so', async () => {
    await expectRefused(['orgs', 'create', '--slug', 'x'], /"x" already exists/);
  });

  it('orgs create without --slug exits non-zero', async () => {
    await expectRefused(['orgs', 'create'], /slug/);
  });

  it('keys create for an unknown organization exits non-zero naming it', async () => {
    await expectRefused(['keys', 'create', '--org', 'nobody'], /"nobody" does not exist/);
  });

  it('an unknown option exits non-zero with the usage, not a stack trace', async () => {
    const result = await expectRefused(['orgs', 'create', '--slugg', 'typo'], /--slugg/);
    expect(result.stdout + result.stderr).to.include('Usage:');
  });

  it('an option without its value exits non-zero with a clear message', async () => {
    await expectRefused(['keys', 'create', '--org'], /--org/);
  });

  it('an unknown command prints the usage and exits 2', async () => {
    const result = await cli('orgs', 'delete');
    expect(result.code).to.equal(2);
    expect(result.stdout).to.include('Usage:');
  });

  it('--help prints the usage and exits 0', async () => {
    const result = await cli('--help');
    expect(result.code).to.equal(0);
    expect(result.stdout).to.include('relay orgs create --slug <slug>');
  });
});
