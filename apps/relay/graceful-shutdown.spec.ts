import { expect } from 'chai';
import type { Store } from '../../libs/store/store.js';
import { BACKEND_TARGETS, type BackendLocation } from '../../libs/testing/backend-targets.js';
import { respond, startHttpSink, type HttpSink } from '../../libs/testing/http-sink.js';
import { waitFor } from '../../libs/testing/wait-for.js';
import {
  API_KEY,
  configurePipeline,
  deliveryStatusCounts,
  ENCRYPTION_KEY,
  openSharedStore,
  postWebhook,
  type Pipeline,
} from '../../testing/pipeline-fixture.js';
import { printOutputOnFailure, startRelayProcess, type RelayProcess } from '../../libs/testing/relay-child-process.js';

const SHUTDOWN_DEADLINE_MS = 10_000;
/**
 * Light load: two senders, each posting its next webhook as soon as the last is answered, over
 * keep-alive connections as providers do. A connection is then nearly always busy when the signal
 * arrives, which is what a server must handle to stop taking requests.
 */
const SENDERS = 2;
/** Acknowledged webhooks before the SIGTERM, so deliveries are in flight when it arrives. */
const BEFORE_SIGTERM = 20;
/** Time for the signal to reach the server's close; a request sent later must not be acknowledged. */
const SIGNAL_GRACE_MS = 500;

for (const target of BACKEND_TARGETS) {
  describe(`SIGTERM to an all-in-one relay process under load [${target.name}]`, function () {
    this.timeout(180_000);
    let location: BackendLocation | undefined;
    let sink: HttpSink;
    let store: Store;
    let env: Record<string, string>;
    let relay: RelayProcess | undefined;
    let pipeline: Pipeline;
    const acknowledged = new Set<string>();

    before(async function () {
      location = await target.prepare(this);
      // Slow answers keep deliveries in flight when the signal arrives.
      sink = await startHttpSink([respond(200, { delayMs: 10 })]);
      env = {
        ...location.env,
        RELAY_API_KEY: API_KEY,
        RELAY_ENCRYPTION_KEY: ENCRYPTION_KEY,
        RELAY_RETRY_JITTER: '0',
        RELAY_SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_DEADLINE_MS),
      };
      relay = await startRelayProcess('all', env);
      store = await openSharedStore(env);
      pipeline = await configurePipeline(relay.url, `${sink.url}/hooks`);
    });

    printOutputOnFailure(() => [relay]);

    after(async function () {
      await relay?.kill();
      await store?.close();
      await sink?.close();
      await location?.cleanup();
    });

    it('stops taking webhooks and exits 0 within the shutdown deadline', async function () {
      const url = relay!.url;
      let sending = true;
      let sent = 0;
      let signalledAt = Infinity;
      const acknowledgedLate: string[] = [];
      const sender = async () => {
        while (sending) {
          const startedAt = Date.now();
          const eventId = await postWebhook(url, pipeline, { n: sent++ });
          if (!eventId) await new Promise((resolve) => setTimeout(resolve, 20));
          else {
            acknowledged.add(eventId);
            if (startedAt > signalledAt + SIGNAL_GRACE_MS) acknowledgedLate.push(eventId);
          }
        }
      };
      const load = Promise.all(Array.from({ length: SENDERS }, sender));
      await waitFor('webhooks to be acknowledged before the signal', async () => acknowledged.size, (count) => count >= BEFORE_SIGTERM);

      signalledAt = Date.now();
      const exit = await relay!.terminate();
      const tookMs = Date.now() - signalledAt;
      sending = false;
      await load;

      expect(acknowledgedLate.length, `webhooks sent more than ${SIGNAL_GRACE_MS} ms after SIGTERM and still acknowledged`).to.equal(0);
      expect({ ...exit, tookMs }, relay!.output().slice(-2000)).to.deep.include({ code: 0, signal: null });
      expect(tookMs).to.be.below(SHUTDOWN_DEADLINE_MS);
      expect(relay!.output()).to.include('"msg":"shutting down"');
    });

    it('after a restart, delivers every acknowledged webhook and leaves no delivery pending', async function () {
      expect(acknowledged.size, 'acknowledged before the restart').to.be.at.least(BEFORE_SIGTERM);
      relay = await startRelayProcess('all', env);
      const delivered = () => new Set(sink.requests.map((request) => String(request.headers['x-relay-event-id'])));
      await waitFor(
        `every acknowledged webhook (${acknowledged.size}) to reach the destination; read: how many have not`,
        async () => [...acknowledged].filter((id) => !delivered().has(id)).length,
        (missing) => missing === 0,
        90_000,
      );
      const statuses = await waitFor(
        'every delivery to settle',
        () => deliveryStatusCounts(store, pipeline.destinationId),
        (counts) => !counts.pending && !counts.retrying,
      );
      expect(Object.keys(statuses)).to.deep.equal(['delivered']);
      expect(statuses.delivered).to.be.at.least(acknowledged.size);
    });
  });
}
