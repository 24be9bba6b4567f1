import { ForbiddenError, NotFoundError, RelayError } from '../../libs/errors/errors.js';

export class SourceNotFoundError extends NotFoundError {
  constructor() {
    super('No source at this ingest URL', 'SOURCE_NOT_FOUND');
  }
}

export class SourceDisabledError extends ForbiddenError {
  constructor() {
    super('SOURCE_DISABLED', 'This source is disabled and does not accept webhooks');
  }
}

export class IpNotAllowedError extends ForbiddenError {
  constructor() {
    super('IP_NOT_ALLOWED', "The sender's IP address is not allowed by this source's filter");
  }
}

export class InvalidSignatureError extends RelayError {
  constructor(reason: string) {
    super(400, 'INVALID_SIGNATURE', `Signature verification failed (${reason})`);
  }
}
