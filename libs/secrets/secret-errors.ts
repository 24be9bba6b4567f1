import { RelayError } from '../errors/errors.js';

/** A sealed value does not open: tampered with, truncated, or sealed under another key. */
export class DecryptionError extends RelayError {
  constructor(message: string, cause?: unknown) {
    super(500, 'DECRYPTION_FAILED', message, { cause });
  }
}

/** The encryption key is unusable (wrong length, unreadable key file); the process must not start. */
export class EncryptionKeyError extends RelayError {
  constructor(message: string, cause?: unknown) {
    super(500, 'ENCRYPTION_KEY_INVALID', message, { cause });
  }
}
