import { expect } from 'chai';
import type { BrokerRecord, OutgoingMessage } from '../broker/broker.js';
import { decodeAttemptRecord, encodeAttemptRecord, type AttemptRecord } from './attempt-record.js';
import { decodeConfigChange, encodeConfigChange, type ConfigChange } from './config-change.js';
import { decodeDeliveryJob, encodeDeliveryJob, type DeliveryJob } from './delivery-job.js';
import { decodeIngestMessage, encodeIngestMessage, type IngestMeta } from './ingest-message.js';
import { MalformedRecordError } from './malformed-record-error.js';

const recordOf = (message: OutgoingMessage): BrokerRecord => ({ topic: 't', partition: 0, offset: '7', key: message.key, value: message.value, headers: message.headers ?? {}, timestamp: 0 });
const withHeader = (header: string, fields: object): BrokerRecord => recordOf({ key: null, value: Buffer.from('body'), headers: { [header]: JSON.stringify(fields) } });
const withValue = (fields: object): BrokerRecord => recordOf({ key: null, value: Buffer.from(JSON.stringify(fields)) });

const meta: IngestMeta = {
  eventId: 'evt_1', orgId: 'org_1', sourceId: 'src_1', sourceSlug: 'shop-events', headers: { 'content-type': 'application/json', 'x-many': ['a', 'b'] },
  contentType: 'application/json', clientIp: null, payloadHash: 'sha256:ab', payloadSize: 4, signatureValid: true, receivedAt: 1, validatedAt: 2, queuedAt: 3,
  path: '/ingest/acme/shop-events', query: { tag: 'x' }, sealed: true,
};
const job: DeliveryJob = {
  deliveryId: 'dlv_1', eventId: 'evt_1', orgId: 'org_1', sourceId: 'src_1', sourceSlug: 'shop-events', destinationId: 'dst_1', attemptNumber: 2, dueAt: 10,
  contentType: null, providerHeaders: { 'x-shop-topic': 'orders/create' }, signatureValid: false, receivedAt: 1, sealed: false, laned: true,
};
const attempt: AttemptRecord = {
  attemptId: 'att_1', deliveryId: 'dlv_1', eventId: 'evt_1', orgId: 'org_1', destinationId: 'dst_1', attemptNumber: 1, startedAt: 1, completedAt: 2, ok: false,
  statusCode: null, latencyMs: 1, error: 'connect ECONNREFUSED', errorKind: 'connect', responseBody: '', deliveryStatus: 'retrying', nextAttemptAt: 5,
};

/** The decoding's MalformedRecordError detail (after the record's place), or a failure if it decoded. */
function malformedDetail(decode: () => unknown): string {
  try {
    decode();
  } catch (error) {
    expect(error).to.be.instanceOf(MalformedRecordError);
    return (error as Error).message.replace('record t/0@7: ', '');
  }
  throw new Error('decoded a malformed record');
}

describe('Message contracts', () => {
  it('decode what they encode: ingest metadata, delivery jobs, attempts and config changes', () => {
    expect(decodeIngestMessage(recordOf(encodeIngestMessage(meta, Buffer.from('body'))))).to.deep.equal({ meta, body: Buffer.from('body') });
    expect(decodeDeliveryJob(recordOf(encodeDeliveryJob(job, Buffer.from('body'))))).to.deep.equal({ job, body: Buffer.from('body') });
    expect(decodeAttemptRecord(recordOf(encodeAttemptRecord(attempt)))).to.deep.equal(attempt);
    const changes: ConfigChange[] = [
      { kind: 'destination', action: 'rotated', orgId: 'org_1', id: 'dst_1' },
      { kind: 'circuit', destinationId: 'dst_1', state: 'half_open' },
    ];
    for (const change of changes) expect(decodeConfigChange(recordOf(encodeConfigChange(change)))).to.deep.equal(change);
  });

  it('name the first bad field of a record that is JSON of the wrong shape', () => {
    expect(malformedDetail(() => decodeDeliveryJob(withHeader('relay-job', { ...job, attemptNumber: '2' })))).to.match(/^relay-job\.attemptNumber: .*expected number/);
    const { eventId: _, ...noEventId } = meta;
    expect(malformedDetail(() => decodeIngestMessage(withHeader('relay-meta', noEventId)))).to.match(/^relay-meta\.eventId: .*expected string/);
    expect(malformedDetail(() => decodeIngestMessage(withHeader('relay-meta', { ...meta, headers: { accept: 7 } })))).to.match(/^relay-meta\.headers\.accept: /);
    expect(malformedDetail(() => decodeAttemptRecord(withValue({ ...attempt, deliveryStatus: 'pending' })))).to.match(/^attempt\.deliveryStatus: /);
    expect(malformedDetail(() => decodeConfigChange(withValue({ kind: 'route', action: 'exploded', orgId: 'org_1', id: 'rte_1' })))).to.match(/^config change\.action: .*"created"/);
    expect(malformedDetail(() => decodeConfigChange(withValue({ kind: 'circuit', destinationId: 'dst_1', state: 'melted' })))).to.match(/^config change\.state: .*"half_open"/);
    expect(malformedDetail(() => decodeConfigChange(withValue({ kind: 'weather', orgId: 'org_1', id: 'x' })))).to.match(/^config change\.kind: /);
  });

  it('call a record malformed when it is not a JSON object at all, or lacks its header', () => {
    expect(malformedDetail(() => decodeDeliveryJob(recordOf({ key: null, value: Buffer.from('x'), headers: { 'relay-job': '{not json' } })))).to.equal('relay-job is not JSON');
    expect(malformedDetail(() => decodeAttemptRecord(withValue([attempt])))).to.match(/^attempt: .*expected object/);
    expect(malformedDetail(() => decodeIngestMessage(recordOf({ key: null, value: Buffer.from('x') })))).to.equal('no relay-meta header');
  });

  it('refuse numbers JSON cannot carry', () => {
    expect(malformedDetail(() => decodeDeliveryJob(recordOf({ key: null, value: Buffer.from('x'), headers: { 'relay-job': JSON.stringify(job).replace('"dueAt":10', '"dueAt":1e999') } })))).to.match(/^relay-job\.dueAt: /);
  });

  it('decode records of older versions, without the source slug, ingest path and query, or sealed flags', () => {
    const { sourceSlug: _slug, path: _path, query: _query, sealed: _sealed, ...olderMeta } = meta;
    expect(decodeIngestMessage(withHeader('relay-meta', olderMeta)).meta).to.deep.equal(olderMeta);
    const { sourceSlug: _jobSlug, sealed: _jobSealed, laned: _laned, ...olderJob } = job;
    expect(decodeDeliveryJob(withHeader('relay-job', olderJob)).job).to.deep.equal(olderJob);
  });

  it('tolerate fields a newer version added, and keep a delivery job\'s for its retries and dead letters', () => {
    expect(decodeIngestMessage(withHeader('relay-meta', { ...meta, region: 'eu' })).meta).to.deep.equal(meta);
    expect(decodeAttemptRecord(withValue({ ...attempt, region: 'eu' }))).to.deep.equal(attempt);
    expect(decodeConfigChange(withValue({ kind: 'source', action: 'deleted', orgId: 'org_1', id: 'src_1', region: 'eu' }))).to.deep.equal({ kind: 'source', action: 'deleted', orgId: 'org_1', id: 'src_1' });
    const { job: newer } = decodeDeliveryJob(withHeader('relay-job', { ...job, region: 'eu' }));
    expect(JSON.parse(encodeDeliveryJob(newer, Buffer.from('body')).headers!['relay-job']!)).to.deep.equal({ ...job, region: 'eu' });
  });
});
