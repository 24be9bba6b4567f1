import { expect } from 'chai';
import Database from 'better-sqlite3';
import path from 'node:path';
import { respond, startHttpSink, type HttpSink } from '../../libs/testing/http-sink.js';
import { postTimedWebhook, receivedMarkers, type IngestAnswer } from '../../libs/testing/ingest-probe.js';
import { sampleSum } from '../../libs/testing/metric-samples.js';
import { API_KEY, configurePipeline, ENCRYPTION_KEY, type Pipeline } from '../../testing/pipeline-fixture.js';
import { printOutputOnFailure, startRelayProcess, type RelayProcess } from '../../libs/testing/relay-child-process.js';
import { mountSmallDisk, smallDiskUnavailableReason, type SmallDisk } from '../../libs/testing/small-disk.js';
import { waitFor } from '../../libs/testing/wait-for.js';

/** Webhooks tried while the disk is full: enough to exhaust whatever free pages SQLite's files still hold. */
const TRIES_WHILE_FULL = 300;

/**
 * The data directory's disk fills while the relay ingests (DESIGN 7 "Unavailable answers"): a real tmpfs
 * of 96 MB under RELAY_DATA_DIR, filled by a file. Ingest answers 503 STORAGE_FULL with Retry-After within
 * 1 s and acknowledges nothing it cannot keep; what was acknowledged is delivered and the files stay
 * sound; once the filler is deleted the same process takes webhooks again. The file layer's mapping
 * (SQLITE_FULL, ENOSPC) is also held without a mount by apps/gateway/ingest-deadline.spec.ts.
 */
describe('an all-in-one relay whose data directory fills up [embedded log + SQLite on a tmpfs]', function () {
  this.timeout(180_000);
  let disk: SmallDisk | undefined;
  let sink: HttpSink;
  let relay: RelayProcess | undefined;
  let pipeline: Pipeline;

  before(async function () {
    const reason = smallDiskUnavailableReason();
    if (reason) {
      console.log(`      skipped: ${reason}; the STORAGE_FULL mapping is covered by ingest-deadline.spec.ts`);
      this.skip();
    }
    disk = mountSmallDisk(96);
    sink = await startHttpSink([respond(200)]);
    relay = await startRelayProcess('all', {
      RELAY_DATA_DIR: disk.dir,
      RELAY_API_KEY: API_KEY,
      RELAY_ENCRYPTION_KEY: ENCRYPTION_KEY,
      RELAY_DEFAULT_PLAN: 'enterprise',
    });
    pipeline = await configurePipeline(relay.url, `${sink.url}/hooks`);
  });

  printOutputOnFailure(() => [relay]);

  after(async () => {
    await relay?.kill();
    await sink?.close();
    disk?.unmount();
  });

  it('answers 503 STORAGE_FULL with Retry-After within 1 s while full, loses nothing acknowledged, and goes on once space returns', async () => {
    const ingestUrl = `${relay!.url}${pipeline.ingestPath}`;
    let exited = false;
    void relay!.exited.then(() => (exited = true));
    const answers: IngestAnswer[] = [];
    const send = async (marker: string) => {
      const answer = await postTimedWebhook(ingestUrl, marker);
      answers.push(answer);
      return answer;
    };
    for (let n = 0; n < 20; n++) expect((await send(`before-${n}`)).status).to.equal(200);

    disk!.fill();
    const whileFull: IngestAnswer[] = [];
    for (let n = 0; n < TRIES_WHILE_FULL; n++) whileFull.push(await send(`full-${n}`));
    const refused = whileFull.filter((answer) => answer.status !== 200);
    expect(refused.length, 'refusals while the disk was full').to.be.above(0);
    for (const answer of refused) {
      expect(answer, answer.marker).to.deep.include({ status: 503, code: 'STORAGE_FULL', retryAfterHeader: '30', retryAfter: 30 });
    }
    expect(sampleSum(await relay!.metrics(), 'relay_ingest_shed_total', { reason: 'STORAGE_FULL' })).to.equal(refused.length);

    disk!.free();
    await waitFor('a 200 once the filler is gone', () => send(`recovering-${answers.length}`), (answer) => answer.status === 200, 30_000, 200);
    for (let n = 0; n < 20; n++) expect((await send(`after-${n}`)).status).to.equal(200);

    const slowest = Math.max(...answers.map((answer) => answer.ms));
    expect(slowest, 'the slowest answer, in ms').to.be.below(1000);
    const acknowledged = answers.filter((answer) => answer.status === 200).map((answer) => answer.marker);
    await waitFor(
      'every acknowledged webhook at the destination (the ones read not there yet)',
      () => {
        const received = receivedMarkers(sink.requests.map((request) => request.body.toString()));
        return acknowledged.filter((marker) => !received.has(marker));
      },
      (missing) => missing.length === 0,
      60_000,
      250,
    );
    expect(exited, 'the relay process ended').to.equal(false);
    // A write refused for the full disk is the dependency's failure, not the record's: nothing is dead-lettered.
    expect(sampleSum(await relay!.metrics(), 'relay_dead_letters_total'), 'records dead-lettered').to.equal(0);
    for (const file of ['broker.sqlite', 'relay.sqlite']) {
      const db = new Database(path.join(disk!.dir, file), { readonly: true });
      try {
        expect(db.pragma('integrity_check', { simple: true }), file).to.equal('ok');
      } finally {
        db.close();
      }
    }
  });
});
