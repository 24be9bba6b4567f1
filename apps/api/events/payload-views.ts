import { Worker } from 'node:worker_threads';
import { RawJson } from '../../../libs/http/raw-json.js';
import { portRequests, type PortRequests } from '../../../libs/thread/port-requests.js';
import { threadEntry } from '../../../libs/thread/thread-entry.js';
import { payloadBytes, payloadValue } from './payload-view.js';

export interface PayloadViewRequest {
  id: number;
  kind: 'value' | 'bytes';
  body: Uint8Array;
  contentType: string | null;
  maskFields: readonly string[];
}

export type PayloadViewAnswer = { id: number; bytes: Uint8Array; payloadEncoding?: 'base64' } | { id: number; error: string };

/**
 * Below this many bytes a view is made where it is asked for: a thread hop costs more than the work.
 * Above, it costs the asking thread a copy of the body each way.
 */
export const OFF_THREAD_FROM_BYTES = 64 * 1024;

/**
 * The memory of `bytes` to transfer rather than copy, when it is all theirs (a large Buffer from the
 * database is): a copy of megabytes is what this thread must not spend. The caller gives `bytes` up.
 */
export function ownBuffer(bytes: Uint8Array): ArrayBuffer[] {
  const { buffer } = bytes;
  return buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength ? [buffer] : [];
}

/**
 * The payload views the API answers with (payload-view.ts), made on a thread of their own for large
 * bodies so that reading them never stalls ingest on the thread they share (DESIGN "Payload reads and
 * exports stream and never stall ingest"). The thread starts at the first large read (a relay that
 * serves none starts none) and again at the next read after it ends; its requests are served one at a time, which also bounds what heavy reads may take at once.
 */
export function createPayloadViews(options: { offThreadFromBytes?: number } = {}) {
  const threshold = options.offThreadFromBytes ?? OFF_THREAD_FROM_BYTES;
  let thread: { worker: Worker; requests: PortRequests<PayloadViewAnswer> } | undefined;

  function requests(): PortRequests<PayloadViewAnswer> {
    if (thread) return thread.requests;
    const worker = new Worker(threadEntry(import.meta.url, 'payload-view-thread'));
    worker.unref();
    const started = {
      worker,
      requests: portRequests<PayloadViewAnswer>(worker, {
        isAnswer: (message): message is PayloadViewAnswer => typeof (message as PayloadViewAnswer | null)?.id === 'number',
        closedError: () => new Error('The payload view thread ended'),
      }),
    };
    worker.once('exit', () => {
      if (thread === started) thread = undefined;
    });
    thread = started;
    return started.requests;
  }

  async function offThread(kind: PayloadViewRequest['kind'], body: Buffer, contentType: string | null, maskFields: readonly string[]) {
    const reply = await requests().request((id) => ({ id, kind, body, contentType, maskFields: [...maskFields] }) satisfies PayloadViewRequest, ownBuffer(body));
    if ('error' in reply) throw new Error(`The payload view thread failed: ${reply.error}`);
    return { bytes: Buffer.from(reply.bytes.buffer, reply.bytes.byteOffset, reply.bytes.byteLength), payloadEncoding: reply.payloadEncoding };
  }

  return {
    /** The payload inside an event view: its value, or for a large body its JSON text, spliced in when answered (jsonWithRaw). */
    async value(body: Buffer, contentType: string | null, maskFields: readonly string[]): Promise<{ payload: unknown; payloadEncoding?: 'base64' }> {
      if (body.length < threshold) return payloadValue(body, contentType, maskFields);
      const { bytes, payloadEncoding } = await offThread('value', body, contentType, maskFields);
      return { payload: new RawJson(bytes), ...(payloadEncoding ? { payloadEncoding } : {}) };
    },
    /** The body `/payload` answers with. */
    async bytes(body: Buffer, contentType: string | null, maskFields: readonly string[]): Promise<Buffer> {
      if (body.length < threshold || maskFields.length === 0) return payloadBytes(body, contentType, maskFields);
      return (await offThread('bytes', body, contentType, maskFields)).bytes;
    },
    async close(): Promise<void> {
      await thread?.worker.terminate();
    },
  };
}

export type PayloadViews = ReturnType<typeof createPayloadViews>;
