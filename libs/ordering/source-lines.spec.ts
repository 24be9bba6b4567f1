import { expect } from 'chai';
import type { OutgoingMessage } from '../broker/broker.js';
import { newId } from '../ids/ids.js';
import { DEAD_DETAIL_HEADER, DEAD_ORIGIN_HEADER, DEAD_REASON_HEADER, type DeadLetterReason } from '../pipeline/dead-letter.js';
import { firstAttemptJob, type DeliveryJob } from '../pipeline/delivery-job.js';
import { describeEachStore } from '../testing/store-targets.js';
import { destinationRow, openStoreFixture, type StoreFixture } from '../testing/store-fixtures.js';
import { createSqlSourceLines, type SourceLines } from './source-lines.js';

describeEachStore('Source lines of an ordered destination', (target) => {
  let fixture: StoreFixture;
  let lines: SourceLines;
  let deadLetters: { reason: DeadLetterReason; message: OutgoingMessage }[];
  let destinationId: string;
  let sourceId: string;

  before(async function () {
    fixture = await openStoreFixture(this, target);
  });

  beforeEach(async () => {
    deadLetters = [];
    lines = createSqlSourceLines(fixture.store.sql, async (reason, message) => {
      deadLetters.push({ reason, message });
    });
    sourceId = (await fixture.createSource()).id;
    destinationId = (await fixture.store.destinations.insert(destinationRow(fixture.org.id, 'sealed', { ordering: 'source' }))).id;
  });

  after(async () => {
    await fixture?.close();
  });

  /** Jobs of one line, in the order the router created them (delivery ids grow in it). */
  const jobs = (count: number): DeliveryJob[] =>
    Array.from({ length: count }, () =>
      firstAttemptJob(
        { eventId: newId('evt'), orgId: fixture.org.id, sourceId, sourceSlug: 'shop', contentType: 'application/json', providerHeaders: {}, signatureValid: true, receivedAt: Date.now() },
        { id: newId('dlv'), destinationId },
      ),
    );

  /** What a hand edit or a half-applied migration could leave: a kept job that no schema version describes. */
  const spoil = (job: DeliveryJob, text: string) => fixture.store.sql.run('UPDATE ordered_waiting SET job = ? WHERE delivery_id = ?', [text, job.deliveryId]);

  it('sends the head, keeps the jobs behind it, and hands over the next one as each finishes', async () => {
    const [first, second, third] = jobs(3);
    expect(await lines.admit(first!, Buffer.from('1'))).to.equal('send');
    expect(await lines.admit(second!, Buffer.from('2'))).to.equal('wait');
    expect(await lines.admit(third!, Buffer.from('3'))).to.equal('wait');

    const next = await lines.advance(first!);
    expect(next?.job).to.deep.equal(second);
    expect(next?.body.toString()).to.equal('2');
    expect(await lines.admit(first!, Buffer.from('1')), 'a finished job delivered again').to.equal('done');
    expect(deadLetters).to.deep.equal([]);
  });

  it('dead-letters a kept job that no longer decodes, as stored, and hands over the one behind it', async () => {
    const [first, second, third] = jobs(3);
    await lines.admit(first!, Buffer.from('1'));
    await lines.admit(second!, Buffer.from('2'));
    await lines.admit(third!, Buffer.from('3'));
    await spoil(second!, JSON.stringify({ ...second, attemptNumber: 'first' }));

    const next = await lines.advance(first!);

    expect(next?.job).to.deep.equal(third);
    expect(deadLetters).to.have.length(1);
    const [{ reason, message }] = deadLetters as [(typeof deadLetters)[number]];
    expect(reason).to.equal('malformed_record');
    expect(message.value.toString()).to.equal('2');
    expect(message.headers?.[DEAD_REASON_HEADER]).to.equal('malformed_record');
    expect(message.headers?.[DEAD_ORIGIN_HEADER]).to.equal(`ordered_waiting/${second!.deliveryId}`);
    expect(message.headers?.[DEAD_DETAIL_HEADER]).to.match(/attemptNumber/);
  });

  it('at start, dead-letters a kept head that no longer decodes and offers the next job in its place', async () => {
    const [first, second, third] = jobs(3);
    await lines.admit(first!, Buffer.from('1'));
    await lines.admit(second!, Buffer.from('2'));
    await lines.admit(third!, Buffer.from('3'));
    // The process stopped after `advance` made the second job the head and before it was published.
    await lines.advance(first!);
    await spoil(second!, '{not json');

    // Earlier tests' lines keep heads of their own destinations.
    const heads = (await lines.unpublishedHeads()).filter((head) => head.job.destinationId === destinationId);

    expect(heads.map((head) => head.job)).to.deep.equal([third]);
    expect(deadLetters.map((letter) => letter.message.headers?.[DEAD_ORIGIN_HEADER])).to.deep.equal([`ordered_waiting/${second!.deliveryId}`]);
  });
});
