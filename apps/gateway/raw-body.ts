import type { IncomingMessage } from 'node:http';
import { PayloadTooLargeError, RelayError } from '../../libs/errors/errors.js';

export class RequestAbortedError extends RelayError {
  constructor() {
    super(400, 'REQUEST_ABORTED', 'The request body was not received in full');
  }
}

/**
 * Reads the body as raw bytes, enforcing `limit` while streaming: a declared or actual size over the
 * limit fails at once, without buffering the rest.
 */
export function readRawBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = request.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(new PayloadTooLargeError(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (error: Error | null, body?: Buffer) => {
      if (settled) return;
      settled = true;
      request.off('data', onData).off('end', onEnd).off('aborted', onAborted).off('error', onError).off('close', onClose);
      if (error) reject(error);
      else resolve(body!);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        // Stop reading; the rest is discarded as the connection closes after the answer.
        request.pause();
        finish(new PayloadTooLargeError(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => finish(null, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    const onAborted = () => finish(new RequestAbortedError());
    const onError = () => finish(new RequestAbortedError());
    const onClose = () => finish(new RequestAbortedError());
    request.on('data', onData).on('end', onEnd).on('aborted', onAborted).on('error', onError).on('close', onClose);
  });
}
