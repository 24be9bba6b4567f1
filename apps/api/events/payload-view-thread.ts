import { parentPort } from 'node:worker_threads';
import { payloadBytes, payloadValue } from './payload-view.js';
import { ownBuffer, type PayloadViewAnswer, type PayloadViewRequest } from './payload-views.js';

/**
 * The payload views of large bodies, on a thread of their own: parsing, masking and serializing a body
 * of megabytes takes tens of milliseconds that the thread serving ingest must not spend.
 */
function answer(request: PayloadViewRequest): PayloadViewAnswer {
  const body = Buffer.from(request.body.buffer, request.body.byteOffset, request.body.byteLength);
  if (request.kind === 'bytes') return { id: request.id, bytes: payloadBytes(body, request.contentType, request.maskFields) };
  const { payload, payloadEncoding } = payloadValue(body, request.contentType, request.maskFields);
  return { id: request.id, bytes: Buffer.from(JSON.stringify(payload)), payloadEncoding };
}

parentPort!.on('message', (request: PayloadViewRequest) => {
  let reply: PayloadViewAnswer;
  try {
    reply = answer(request);
  } catch (error) {
    reply = { id: request.id, error: (error as Error).message };
  }
  parentPort!.postMessage(reply, 'bytes' in reply ? ownBuffer(reply.bytes) : []);
});
