import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { SECRET_BOX_KEY_BYTES } from './secret-box.js';
import { EncryptionKeyError } from './secret-errors.js';

export const KEY_FILE_NAME = 'encryption.key';
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

async function readKeyFile(file: string): Promise<Buffer | undefined> {
  let text: string;
  try {
    text = (await readFile(file, 'utf8')).trim();
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw new EncryptionKeyError(`Cannot read ${file}`, error);
  }
  const key = BASE64.test(text) ? Buffer.from(text, 'base64') : undefined;
  if (key?.length !== SECRET_BOX_KEY_BYTES) {
    throw new EncryptionKeyError(`${file} must hold ${SECRET_BOX_KEY_BYTES} bytes in base64`);
  }
  return key;
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * The embedded default's encryption key: `<dataDir>/encryption.key` (base64 of 32 bytes), created
 * with mode 0600 on first start. The new key is written to a temporary file and hard-linked into
 * place, which fails rather than overwrites when another process got there first, so concurrent
 * starts all end up with the one key that is on disk and no reader ever sees a half-written file.
 */
export async function loadOrCreateKeyFile(dataDir: string): Promise<Buffer> {
  const file = path.join(dataDir, KEY_FILE_NAME);
  const existing = await readKeyFile(file);
  if (existing) return existing;

  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(SECRET_BOX_KEY_BYTES);
  const temp = path.join(dataDir, `.${KEY_FILE_NAME}.${randomBytes(8).toString('hex')}.tmp`);
  try {
    const handle = await open(temp, 'wx', 0o600);
    try {
      await handle.writeFile(`${key.toString('base64')}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await link(temp, file);
    await syncDirectory(dataDir);
    return key;
  } catch (error) {
    if (errorCode(error) !== 'EEXIST') throw new EncryptionKeyError(`Cannot create ${file}`, error);
    const winner = await readKeyFile(file);
    if (!winner) throw new EncryptionKeyError(`${file} vanished while being created`, error);
    return winner;
  } finally {
    await rm(temp, { force: true });
  }
}
