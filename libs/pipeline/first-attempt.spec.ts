import { expect } from 'chai';
import type { OutgoingMessage } from '../broker/broker.js';
import { createSecretBox } from '../secrets/secret-box.js';
import { openStoredPayload } from '../payload/stored-payload.js';
import { decodeDeliveryJob, type DeliveryJob } from './delivery-job.js';
import { firstAttemptMessage } from './first-attempt.js';
import { destinationTopic } from './topology.js';

const secrets = createSecretBox(Buffer.alloc(32, 3));
const receivedAt = 1_700_000_000_000;
const job: DeliveryJob = {
  deliveryId: 'dlv_1',
  eventId: 'evt_1',
  orgId: 'org_1',
  sourceId: 'src_1',
  destinationId: 'dst_1',
  attemptNumber: 1,
  dueAt: 0,
  contentType: 'application/json',
  providerHeaders: { 'x-provider': 'shop' },
  signatureValid: true,
  receivedAt,
};
const body = Buffer.from('{"type":"order.created"}');
/** The message as a deliverer reads it back. */
const decoded = (message: OutgoingMessage) => decodeDeliveryJob({ topic: '', partition: 0, offset: '0', timestamp: 0, key: message.key ?? null, value: message.value, headers: message.headers ?? {} });

describe('firstAttemptMessage', () => {
  it("sends a job without a delay or transformation to its destination's topic, unchanged", () => {
    const { topic, message } = firstAttemptMessage(job, body, { delaySeconds: 0 }, receivedAt + 5, secrets);
    expect(topic).to.equal(destinationTopic('dst_1'));
    expect(decoded(message)).to.deep.equal({ job, body });
  });

  it("sends a delayed job through the retry tier that fits what is left of the delay, due at the event's receipt plus the delay", () => {
    const { topic, message } = firstAttemptMessage(job, body, { delaySeconds: 60 }, receivedAt + 5, secrets);
    expect(topic).to.equal('relay.retry.30s');
    expect(decoded(message).job.dueAt).to.equal(receivedAt + 60_000);
    const later = firstAttemptMessage(job, body, { delaySeconds: 3 }, receivedAt + 2_500, secrets);
    expect(later.topic).to.equal('relay.retry.1s');
  });

  it('sends a job whose delay has passed (a replay of an old event) to its destination at once', () => {
    expect(firstAttemptMessage(job, body, { delaySeconds: 60 }, receivedAt + 61_000, secrets).topic).to.equal(destinationTopic('dst_1'));
  });

  it("carries the transformed request in place of the provider's, sealed when the event's body is", () => {
    const transformed = { body: Buffer.from('plain'), contentType: 'text/plain', headers: { 'x-transformed': 'yes' } };
    const plain = decoded(firstAttemptMessage(job, body, { transformationId: 'trs_1', transformed, delaySeconds: 0 }, receivedAt, secrets).message);
    expect(plain.body.toString()).to.equal('plain');
    expect(plain.job).to.include({ contentType: 'text/plain', transformationId: 'trs_1' });
    expect(plain.job.providerHeaders).to.deep.equal({ 'x-transformed': 'yes' });

    const sealed = decoded(firstAttemptMessage({ ...job, sealed: true }, body, { transformationId: 'trs_1', transformed, delaySeconds: 0 }, receivedAt, secrets).message);
    expect(sealed.body.toString()).not.to.include('plain');
    expect(openStoredPayload(sealed.body, true, secrets).toString()).to.equal('plain');
  });
});
