import { expect } from 'chai';
import type { Store } from '../../libs/store/store.js';
import { BACKEND_TARGETS, type BackendLocation } from '../../libs/testing/backend-targets.js';
import { respond, startHttpSink, type HttpSink } from '../../libs/testing/http-sink.js';
import {
  API_KEY,
  configurePipeline,
  deliveryStatusCounts,
  ENCRYPTION_KEY,
  openSharedStore,
  postWebhook,
  waitFor,
  type Pipeline,
} from './pipeline-fixture.js';
import { startRelayProcess, type RelayProcess } from './relay-process.js';

const SHUTDOWN_DEADLINE_MS = 10_000;
/** Light load: senders each posting a webhook, then pausing; requests are in flight most of the time. */
const SENDERS = 2;
const PAUSE_MS = 50;
/** Acknowledged webhooks before the SIGTERM, so deliveries are in flight when it arrives. */
const BEFORE_SIGTERM = 20;

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
    let failed = false;

    before(async function () {
      location = await target.prepare(this);
      // Slow answers keep deliveries in flight when the signal arrives.
      sink = await startHttpSink([respond(200, { delayMs: 50 })]);
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

    afterEach(function () {
      failed ||= this.currentTest?.state === 'failed';
    });

    after(async function () {
      if (failed && relay) console.log(`\n--- relay output (tail) ---\n${relay.output().slice(-4000)}`);
      await relay?.kill();
      await store?.close();
      await sink?.close();
      await location?.cleanup();
    });

    it('stops taking webhooks and exits 0 within the shutdown deadline', async function () {
      const url = relay!.url;
      let sending = true;
      let sent = 0;
      const sender = async () => {
        while (sending) {
          const eventId = await postWebhook(url, pipeline, { n: sent++ });
          if (eventId) acknowledged.add(eventId);
          await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
        }
      };
      const load = Promise.all(Array.from({ length: SENDERS }, sender));
      await waitFor('webhooks to be acknowledged before the signal', async () => acknowledged.size, (count) => count >= BEFORE_SIGTERM);

      const signalledAt = Date.now();
      const exit = await relay!.terminate();
      const tookMs = Date.now() - signalledAt;
      sending = false;
      await load;

      expect(exit, relay!.output().slice(-2000)).to.deep.equal({ code: 0, signal: null });
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
        60_000,
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
