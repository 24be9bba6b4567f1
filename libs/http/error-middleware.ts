import type { Context, Next } from 'koa';
import { RelayError } from '../errors/errors.js';
import type { Logger } from '../logging/logger.js';
import { logFields } from '../tracing/relay-tracer.js';
import type { RequestLogContext } from './request-context.js';

interface HttpishError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  type?: string;
}

/** Maps errors thrown by libraries (koa-body/co-body, URI decoding) onto our own classes. */
function classify(error: unknown): RelayError | undefined {
  if (error instanceof RelayError) return error;
  if (error instanceof URIError) return new RelayError(400, 'INVALID_PATH', 'The request path is not valid URL encoding');
  const httpish = error as HttpishError | null;
  const status = httpish?.status ?? httpish?.statusCode;
  if (typeof status !== 'number' || status < 400 || status >= 500) return undefined;
  // co-body rethrows JSON.parse's SyntaxError with status 400.
  if (error instanceof SyntaxError) return new RelayError(400, 'INVALID_JSON', 'Request body is not valid JSON');
  switch (httpish?.type) {
    case 'entity.parse.failed':
      return new RelayError(400, 'INVALID_JSON', 'Request body is not valid JSON');
    case 'entity.too.large':
      return new RelayError(413, 'PAYLOAD_TOO_LARGE', 'Request body is too large');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new RelayError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Unsupported request body encoding');
    case 'request.aborted':
      return new RelayError(400, 'REQUEST_ABORTED', 'The request body was not received in full');
    default:
      return new RelayError(status, 'BAD_REQUEST', 'The request could not be processed');
  }
}

/** The one error path: every failure leaves as `{error, message, code}`, never with a stack trace. */
export function errorMiddleware(logger: Logger) {
  return async function handleErrors(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
    } catch (error) {
      const known = classify(error);
      // A 500 is a fault of ours (a row no code wrote, a key that cannot open a secret): the operator reads
      // it in the log, and the client gets no table, field or key names.
      const answered = known !== undefined && known.status !== 500;
      const relayError = answered ? known : new RelayError(500, 'INTERNAL_ERROR', 'An unexpected error occurred; it has been logged');
      if (!answered) logger.error({ err: error, requestId: ctx.state.requestId, method: ctx.method, path: ctx.path, ...logFields((ctx.state as RequestLogContext).span) }, 'unhandled error');
      ctx.status = relayError.status;
      const body: Record<string, unknown> = {
        error: relayError.title,
        message: relayError.message,
        code: relayError.code,
      };
      if (relayError.details?.length) body.details = relayError.details;
      if (relayError.retryAfterMs !== undefined) {
        const seconds = Math.max(1, Math.ceil(relayError.retryAfterMs / 1000));
        body.retryAfter = seconds;
        ctx.set('Retry-After', String(seconds));
      }
      ctx.body = body;
    }
  };
}
