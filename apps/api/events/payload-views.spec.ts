import { expect } from 'chai';
import { jsonWithRaw, RawJson } from '../../../libs/http/raw-json.js';
import { payloadBytes, payloadValue } from './payload-view.js';
import { createPayloadViews, type PayloadViews } from './payload-views.js';

/** A fresh copy each time: a large body is handed over to the thread (transferred), not copied. */
const largeJson = () => Buffer.from(JSON.stringify({ customer: { email: 'a@example.com' }, items: Array.from({ length: 3000 }, (_, id) => ({ id, note: 'x'.repeat(40) })) }));

describe('createPayloadViews', () => {
  let views: PayloadViews;
  before(() => {
    views = createPayloadViews({ offThreadFromBytes: 1024 });
  });
  after(() => views.close());

  it('makes the view of a large body on its own thread, as JSON text equal to the view made in place, masks applied', async () => {
    const masks = ['$.customer.email'];
    const body = largeJson();
    const view = await views.value(body, 'application/json', masks);
    expect(view.payload).to.be.instanceOf(RawJson);
    expect(body.buffer.byteLength, 'the body was handed over, not copied').to.equal(0);
    expect(JSON.parse((view.payload as RawJson).bytes.toString())).to.deep.equal(payloadValue(largeJson(), 'application/json', masks).payload);
    expect(JSON.parse(jsonWithRaw({ id: 'evt_1', ...view }).toString()).payload.customer.email).to.equal('****');
  });

  it('answers a large binary body as base64, and /payload bytes masked as in place', async () => {
    const binary = Buffer.alloc(4096, 0xff);
    const base64 = binary.toString('base64');
    const view = await views.value(binary, 'application/octet-stream', []);
    expect(view.payloadEncoding).to.equal('base64');
    expect(JSON.parse((view.payload as RawJson).bytes.toString())).to.equal(base64);
    const masks = ['$.customer.email'];
    expect((await views.bytes(largeJson(), 'application/json', masks)).equals(payloadBytes(largeJson(), 'application/json', masks))).to.equal(true);
  });

  it('keeps small bodies on the asking thread, as values', async () => {
    const view = await views.value(Buffer.from('{"a":1}'), 'application/json', []);
    expect(view.payload).to.deep.equal({ a: 1 });
  });

  it('starts the thread again after it ended', async () => {
    await views.close();
    const view = await views.value(largeJson(), 'application/json', []);
    expect(JSON.parse((view.payload as RawJson).bytes.toString()).items).to.have.length(3000);
  });
});

describe('jsonWithRaw', () => {
  it('splices each raw value in place of its field, and serializes the rest as JSON.stringify does', () => {
    const value = { a: 'x"y', raw: new RawJson(Buffer.from('[1,{"b":2}]')), list: [new RawJson(Buffer.from('"s"')), null] };
    expect(JSON.parse(jsonWithRaw(value).toString())).to.deep.equal({ a: 'x"y', raw: [1, { b: 2 }], list: ['s', null] });
    expect(jsonWithRaw({ a: [1, 'two'] }).toString()).to.equal(JSON.stringify({ a: [1, 'two'] }));
  });
});
