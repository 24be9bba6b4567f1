import { RelayError } from '../errors/errors.js';

/** The broker cannot take or serve records right now (unreachable, closed, lock held elsewhere); retrying may help. */
export class BrokerUnavailableError extends RelayError {
  constructor(message: string, cause?: unknown, retryAfterMs?: number) {
    super(503, 'BROKER_UNAVAILABLE', message, { retriable: true, cause, retryAfterMs });
  }
}

/** A record is larger than the broker accepts; sending it again cannot succeed. */
export class MessageTooLargeError extends RelayError {
  constructor(topic: string, bytes: number | undefined, limitBytes: number | undefined, cause?: unknown) {
    const size = bytes === undefined ? 'A record' : `A record of ${bytes} bytes`;
    const limit = limitBytes === undefined ? '' : ` (limit ${limitBytes} bytes)`;
    super(413, 'MESSAGE_TOO_LARGE', `${size} is too large for topic ${topic}${limit}`, { cause });
  }
}

/** The broker refused a request for a reason retrying will not fix (invalid topic name, authorization, ...). */
export class BrokerRequestError extends RelayError {
  constructor(message: string, cause?: unknown) {
    super(500, 'BROKER_ERROR', message, { retriable: false, cause });
  }
}
