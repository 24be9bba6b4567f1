import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { DecryptionError, EncryptionKeyError } from './secret-errors.js';

/** Encrypts short strings at rest (secrets, credentials, payload fields). */
export interface SecretBox {
  /** `v1:<iv b64>:<tag b64>:<ciphertext b64>`; a fresh IV every time, so equal inputs seal differently. */
  seal(plaintext: string): string;
  /** Throws DecryptionError when the value was altered or sealed under another key. */
  open(sealed: string): string;
}

export const SECRET_BOX_KEY_BYTES = 32;
const VERSION = 'v1';
const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function decodePart(text: string, expectedBytes?: number): Buffer {
  if (!BASE64.test(text)) throw new DecryptionError('Sealed value is malformed');
  const bytes = Buffer.from(text, 'base64');
  if (expectedBytes !== undefined && bytes.length !== expectedBytes) throw new DecryptionError('Sealed value is malformed');
  return bytes;
}

/** AES-256-GCM under a 32-byte key. */
export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== SECRET_BOX_KEY_BYTES) {
    throw new EncryptionKeyError(`Encryption key must be ${SECRET_BOX_KEY_BYTES} bytes, got ${key.length}`);
  }
  const secretKey = Buffer.from(key);

  return {
    seal(plaintext) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv(ALGORITHM, secretKey, iv, { authTagLength: TAG_BYTES });
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return `${VERSION}:${iv.toString('base64')}:${cipher.getAuthTag().toString('base64')}:${ciphertext.toString('base64')}`;
    },

    open(sealed) {
      const parts = sealed.split(':');
      if (parts.length !== 4 || parts[0] !== VERSION) throw new DecryptionError('Sealed value has an unknown format');
      const iv = decodePart(parts[1], IV_BYTES);
      const tag = decodePart(parts[2], TAG_BYTES);
      const ciphertext = decodePart(parts[3]);
      const decipher = createDecipheriv(ALGORITHM, secretKey, iv, { authTagLength: TAG_BYTES });
      decipher.setAuthTag(tag);
      try {
        return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
      } catch (error) {
        throw new DecryptionError('Sealed value failed authentication (altered or sealed under another key)', error);
      }
    },
  };
}
