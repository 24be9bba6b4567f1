/**
 * Every error the relay raises on purpose is a RelayError: it carries its HTTP status, a stable
 * machine code and whether trying again can help. Callers classify by class, never by message.
 */
export interface FieldIssue {
  field: string;
  message: string;
}

export interface RelayErrorOptions {
  retriable?: boolean;
  retryAfterMs?: number;
  details?: FieldIssue[];
  cause?: unknown;
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  410: 'Gone',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

export class RelayError extends Error {
  readonly status: number;
  readonly code: string;
  readonly retriable: boolean;
  readonly retryAfterMs?: number;
  readonly details?: FieldIssue[];

  constructor(status: number, code: string, message: string, options: RelayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.status = status;
    this.code = code;
    this.retriable = options.retriable ?? false;
    this.retryAfterMs = options.retryAfterMs;
    this.details = options.details;
  }

  /** The HTTP reason phrase used as `error` in the response envelope. */
  get title(): string {
    return TITLES[this.status] ?? 'Error';
  }
}

export class ValidationError extends RelayError {
  constructor(message: string, details: FieldIssue[] = [], code = 'VALIDATION_ERROR') {
    super(400, code, message, { details });
  }
}

/** A target that is, or resolves to, an address deliveries may not reach (RELAY_BLOCK_PRIVATE_DESTINATIONS). */
export class PrivateDestinationError extends ValidationError {
  constructor(message: string, details: FieldIssue[] = []) {
    super(message, details, 'PRIVATE_DESTINATION');
  }
}

export class InvalidJsonError extends RelayError {
  constructor(message = 'Request body is not valid JSON') {
    super(400, 'INVALID_JSON', message);
  }
}

export class UnauthorizedError extends RelayError {
  constructor(message = 'A valid API key is required: Authorization: Bearer <API_KEY>') {
    super(401, 'UNAUTHORIZED', message);
  }
}

export class ForbiddenError extends RelayError {
  constructor(code: string, message: string) {
    super(403, code, message);
  }
}

export class NotFoundError extends RelayError {
  constructor(message: string, code = 'RESOURCE_NOT_FOUND') {
    super(404, code, message);
  }
}

export class MethodNotAllowedError extends RelayError {
  constructor(message = 'This method is not allowed on this resource') {
    super(405, 'METHOD_NOT_ALLOWED', message);
  }
}

export class ConflictError extends RelayError {
  constructor(code: string, message: string) {
    super(409, code, message);
  }
}

export class GoneError extends RelayError {
  constructor(code: string, message: string) {
    super(410, code, message);
  }
}

export class PayloadTooLargeError extends RelayError {
  constructor(limitBytes: number) {
    super(413, 'PAYLOAD_TOO_LARGE', `Payload exceeds the plan limit of ${limitBytes} bytes`);
  }
}

export class RateLimitedError extends RelayError {
  constructor(retryAfterMs: number, message = 'Rate limit exceeded') {
    super(429, 'RATE_LIMITED', message, { retriable: true, retryAfterMs });
  }
}

/** A dependency (store, broker) is not reachable right now; the caller may try again. */
export class UnavailableError extends RelayError {
  constructor(message: string, cause?: unknown, details?: FieldIssue[]) {
    super(503, 'SERVICE_UNAVAILABLE', message, { retriable: true, cause, details });
  }
}

/** A store read or write the request needs failed or did not answer in time; nothing was acknowledged. */
export class StoreUnavailableError extends RelayError {
  constructor(message: string, cause?: unknown) {
    super(503, 'STORE_UNAVAILABLE', message, { retriable: true, retryAfterMs: 5_000, cause });
  }
}

/**
 * Ingest has more requests in hand than it was set to take (RELAY_INGEST_MAX_IN_FLIGHT): this one is
 * refused at once rather than queued behind them (docs/decisions/0089-ingest-overload-shed.md).
 */
export class OverloadedError extends RelayError {
  constructor(retryAfterMs = 1_000) {
    super(503, 'OVERLOADED', 'The relay is taking more webhooks than it can keep up with; nothing was acknowledged, try again', { retriable: true, retryAfterMs });
  }
}

/** The data directory's disk is full: nothing more can be kept until space returns. */
export class StorageFullError extends RelayError {
  constructor(cause?: unknown) {
    super(503, 'STORAGE_FULL', "The data directory's disk is full; nothing was acknowledged", { retriable: true, retryAfterMs: 30_000, cause });
  }
}

/** A configuration value is missing or malformed; the process must not start. */
export class ConfigError extends RelayError {
  constructor(readonly variable: string, message: string) {
    super(500, 'CONFIG_ERROR', `${variable}: ${message}`);
  }
}

export function isRelayError(value: unknown): value is RelayError {
  return value instanceof RelayError;
}
