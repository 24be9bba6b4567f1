import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { KEY_FILE_NAME, loadOrCreateKeyFile } from './key-file.js';
import { createSecretBox } from './secret-box.js';
import { EncryptionKeyError } from './secret-errors.js';

describe('loadOrCreateKeyFile', () => {
  let dataDir: string;

  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'relay-key-'));
  });

  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('creates encryption.key with mode 0600 holding the base64 of the 32-byte key it returns', async () => {
    const key = await loadOrCreateKeyFile(dataDir);
    const file = path.join(dataDir, KEY_FILE_NAME);
    expect(key).to.have.length(32);
    expect(Buffer.from((await readFile(file, 'utf8')).trim(), 'base64').equals(key)).to.equal(true);
    expect((await stat(file)).mode & 0o777).to.equal(0o600);
  });

  it('returns the same key on the next start, so values sealed before still open', async () => {
    const sealed = createSecretBox(await loadOrCreateKeyFile(dataDir)).seal('hello');
    expect(createSecretBox(await loadOrCreateKeyFile(dataDir)).open(sealed)).to.equal('hello');
  });

  it('reads a key file written by the operator', async () => {
    const key = randomBytes(32);
    await writeFile(path.join(dataDir, KEY_FILE_NAME), `${key.toString('base64')}\n`, { mode: 0o600 });
    expect((await loadOrCreateKeyFile(dataDir)).equals(key)).to.equal(true);
  });

  it('creates the data directory when it does not exist yet', async () => {
    const nested = path.join(dataDir, 'a', 'b');
    expect(await loadOrCreateKeyFile(nested)).to.have.length(32);
    expect((await stat(path.join(nested, KEY_FILE_NAME))).isFile()).to.equal(true);
  });

  it('when concurrent starts race, all get the one key on disk and no temporary file is left', async () => {
    const keys = await Promise.all(Array.from({ length: 20 }, () => loadOrCreateKeyFile(dataDir)));
    const onDisk = Buffer.from((await readFile(path.join(dataDir, KEY_FILE_NAME), 'utf8')).trim(), 'base64');
    for (const key of keys) expect(key.equals(onDisk)).to.equal(true);
    expect(await readdir(dataDir)).to.deep.equal([KEY_FILE_NAME]);
  });

  it('refuses a key file that is not base64 of 32 bytes, leaving it untouched', async () => {
    const file = path.join(dataDir, KEY_FILE_NAME);
    for (const content of ['', 'not base64!', randomBytes(16).toString('base64')]) {
      await writeFile(file, content);
      let thrown: unknown;
      await loadOrCreateKeyFile(dataDir).catch((error: unknown) => (thrown = error));
      expect(thrown, JSON.stringify(content)).to.be.instanceOf(EncryptionKeyError);
      expect(await readFile(file, 'utf8')).to.equal(content);
    }
  });
});
