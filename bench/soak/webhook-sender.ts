import type { Dispatcher } from 'undici';
import { signedWebhook } from '../signed-webhook.js';
import type { Answer } from './open-loop.js';

/**
 * A sender of `count` signed webhooks, round-robin over `paths` at `baseUrl`, for one rate's open loop.
 *
 * The bodies are made and signed before the load starts and go out through undici's `dispatch` with a
 * handler of our own, not `request()` (a stream and a promise chain per answer): a provider signs on its own
 * machine, and here the generator shares the relay's two cores, so every microsecond it spends is one the
 * relay does not get. At 3,000/s against bare `node:http` this sender took 69-82 µs of CPU a request where signing
 * during the load with `request()` took 108-171 (docs/decisions/0039-soak-bench-method.md).
 */
export function preparedWebhookSender(baseUrl: string, paths: readonly string[], secret: string, count: number, dispatcher: Dispatcher): () => Promise<Answer> {
  const { origin } = new URL(baseUrl);
  // A sent one's place is emptied, so the array no longer keeps its body alive.
  const prepared: ({ path: string; headers: string[]; body: Buffer } | undefined)[] = Array.from({ length: count }, (_, index) => {
    const { body, headers } = signedWebhook(secret);
    return { path: paths[index % paths.length]!, headers: Object.entries(headers).flat(), body: Buffer.from(body) };
  });
  let next = 0;
  return () => {
    const webhook = prepared[next];
    if (!webhook) return Promise.reject(new Error(`all ${count} prepared webhooks were sent`));
    prepared[next++] = undefined;
    return new Promise<Answer>((resolve, reject) => {
      let status = 0;
      const chunks: Buffer[] = [];
      dispatcher.dispatch(
        { origin, path: webhook.path, method: 'POST', headers: webhook.headers, body: webhook.body },
        // undici's handler of the kind before 7 (deprecated, still served): its raw headers, where the current kind's
        // onResponseStart gets them parsed into an object, 10-20 µs a request more here.
        {
          onConnect: () => {},
          onHeaders: (statusCode) => {
            status = statusCode;
            return true;
          },
          onData: (chunk) => {
            chunks.push(chunk);
            return true;
          },
          onComplete: () => {
            if (status !== 200) return resolve({ status });
            resolve({ status, eventId: (JSON.parse(Buffer.concat(chunks).toString()) as { eventId?: string }).eventId });
          },
          onError: reject,
        },
      );
    });
  };
}
