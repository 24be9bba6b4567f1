import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { loadConfig } from '../../libs/config/config.js';
import { createLogger } from '../../libs/logging/logger.js';
import { describeEachBackend, type BackendLocation } from '../../libs/testing/backend-targets.js';
import { startRelay } from './relay.js';
import { TEST_API_KEY } from '../../testing/relay-harness.js';
import { TEST_RELAY_ENV } from '../../libs/testing/test-relay-env.js';

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

/** Every entry of the directory with its mode, as `name: 0o...`. */
function modes(dir: string): Record<string, string> {
  return Object.fromEntries(fs.readdirSync(dir).map((name) => [name, `0o${modeOf(path.join(dir, name)).toString(8)}`]));
}

describeEachBackend('the data directory is private', (target) => {
  let location: BackendLocation;
  const lines: string[] = [];
  const logger = createLogger({
    level: 'warn',
    destination: new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    }),
  });

  beforeEach(async function () {
    this.timeout(60_000);
    location = await target.prepare(this);
    lines.length = 0;
  });

  afterEach(async function () {
    this.timeout(60_000);
    await location?.cleanup();
  });

  async function startAndStop(dataDir: string): Promise<void> {
    const env = { ...TEST_RELAY_ENV, ...location.env, RELAY_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', RELAY_API_KEY: TEST_API_KEY };
    // Without RELAY_ENCRYPTION_KEY, so the key file is written too (the one file with Kafka and PostgreSQL).
    const relay = await startRelay(loadConfig(env), { logger });
    await relay.close();
  }

  it('creates the directory 0700 and every file in it 0600', async function () {
    this.timeout(60_000);
    const dataDir = path.join(location.env.RELAY_DATA_DIR!, 'fresh');
    await startAndStop(dataDir);
    expect(modeOf(dataDir)).to.equal(0o700);
    const files = modes(dataDir);
    expect(Object.keys(files)).not.to.deep.equal([]);
    for (const [name, mode] of Object.entries(files)) expect(mode, name).to.equal('0o600');
    expect(lines.filter((line) => line.includes('made private'))).to.deep.equal([]);
  });

  it('makes an existing directory and its files private on start, with a warning', async function () {
    this.timeout(60_000);
    const dataDir = path.join(location.env.RELAY_DATA_DIR!, 'existing');
    await startAndStop(dataDir);
    fs.chmodSync(dataDir, 0o755);
    for (const name of fs.readdirSync(dataDir)) fs.chmodSync(path.join(dataDir, name), 0o644);
    await startAndStop(dataDir);
    expect(modeOf(dataDir)).to.equal(0o700);
    for (const [name, mode] of Object.entries(modes(dataDir))) expect(mode, name).to.equal('0o600');
    const warnings = lines.map((line) => JSON.parse(line)).filter((entry) => String(entry.msg).includes('made private'));
    expect(warnings).to.have.length(1);
    expect(warnings[0].paths).to.include(dataDir);
  });
});
