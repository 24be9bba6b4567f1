import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { RelayError } from '../errors/errors.js';
import { createSecretBox } from './secret-box.js';
import { DecryptionError, EncryptionKeyError } from './secret-errors.js';

const box = createSecretBox(randomBytes(32));

function expectDecryptionError(open: () => string): void {
  let thrown: unknown;
  try {
    open();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).to.be.instanceOf(DecryptionError).and.instanceOf(RelayError);
  expect(thrown).to.include({ code: 'DECRYPTION_FAILED', status: 500 });
}

/** Replaces one base64 field of a sealed value. */
function withPart(sealed: string, index: number, change: (bytes: Buffer) => Buffer): string {
  const parts = sealed.split(':');
  parts[index] = change(Buffer.from(parts[index], 'base64')).toString('base64');
  return parts.join(':');
}

function flipFirstBit(bytes: Buffer): Buffer {
  const copy = Buffer.from(bytes);
  copy[0] ^= 1;
  return copy;
}

describe('createSecretBox', () => {
  it('opens what it sealed, including empty and non-ASCII text', () => {
    for (const plaintext of ['whsec_c2VjcmV0', '', 'pässwörd 🔑', 'x'.repeat(10_000)]) {
      expect(box.open(box.seal(plaintext))).to.equal(plaintext);
    }
  });

  it('seals as v1:<iv b64>:<tag b64>:<ciphertext b64> with a 12-byte IV and a 16-byte tag', () => {
    const [version, iv, tag, ciphertext, ...rest] = box.seal('hello').split(':');
    expect(version).to.equal('v1');
    expect(Buffer.from(iv, 'base64')).to.have.length(12);
    expect(Buffer.from(tag, 'base64')).to.have.length(16);
    expect(Buffer.from(ciphertext, 'base64')).to.have.length(5);
    expect(rest).to.deep.equal([]);
  });

  it('seals the same text differently each time and never shows it in clear', () => {
    const first = box.seal('the-secret');
    expect(box.seal('the-secret')).to.not.equal(first);
    expect(first).to.not.include('the-secret');
    expect(first).to.not.include(Buffer.from('the-secret').toString('base64'));
  });

  it('refuses to open a value sealed under another key', () => {
    const other = createSecretBox(randomBytes(32));
    expectDecryptionError(() => other.open(box.seal('hello')));
  });

  it('refuses a changed ciphertext, tag or IV', () => {
    const sealed = box.seal('hello');
    for (const index of [1, 2, 3]) expectDecryptionError(() => box.open(withPart(sealed, index, flipFirstBit)));
  });

  it('refuses a truncated tag or IV rather than checking a shorter tag', () => {
    const sealed = box.seal('hello');
    expectDecryptionError(() => box.open(withPart(sealed, 2, (tag) => tag.subarray(0, 12))));
    expectDecryptionError(() => box.open(withPart(sealed, 1, (iv) => iv.subarray(0, 8))));
  });

  it('refuses unknown versions and malformed values', () => {
    const sealed = box.seal('hello');
    for (const bad of [sealed.replace(/^v1:/, 'v2:'), 'hello', '', 'v1:a:b', `${sealed}:extra`, sealed.replace(/:[^:]*$/, ':not base64!')]) {
      expectDecryptionError(() => box.open(bad));
    }
  });

  it('keeps working when the caller later overwrites its key buffer', () => {
    const key = randomBytes(32);
    const own = createSecretBox(key);
    const sealed = own.seal('hello');
    key.fill(0);
    expect(own.open(sealed)).to.equal('hello');
  });

  it('refuses a key that is not 32 bytes', () => {
    for (const length of [0, 16, 31, 33, 64]) {
      expect(() => createSecretBox(randomBytes(length)), String(length)).to.throw(EncryptionKeyError);
    }
  });
});
