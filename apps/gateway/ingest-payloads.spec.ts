import { expect } from 'chai';
import { createHash, randomBytes } from 'node:crypto';
import { describeEachStore } from '../../libs/testing/store-targets.js';
import { startIngestHarness, type IngestHarness } from '../../testing/ingest-harness.js';

interface PayloadCase {
  title: string;
  contentType: string;
  body: () => Buffer;
}

let counter = 0;
const n = () => `${Date.now()}-${++counter}`;

const CASES: PayloadCase[] = [
  {
    title: 'JSON with odd spacing, key order, escapes and non-ASCII',
    contentType: 'application/json',
    body: () => Buffer.from(`{ "z":1,\n\t"a" : [1.50, 2e3] , "text":"caf\u00e9 \\u00e9 \ud83d\ude80", "n":"${n()}" }\r\n`),
  },
  {
    title: 'a form body with repeated and encoded fields',
    contentType: 'application/x-www-form-urlencoded',
    body: () => Buffer.from(`b=2&a=1&a=0&msg=Hello+%26+welcome%21&empty=&n=${n()}`),
  },
  {
    title: 'text/plain with a charset and Latin-1 bytes',
    contentType: 'text/plain; charset=iso-8859-1',
    body: () => Buffer.concat([Buffer.from(`line ${n()}\r\n`), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a])]),
  },
  {
    title: 'an arbitrary binary content type with bytes that are not UTF-8',
    contentType: 'application/x-protobuf',
    body: () => Buffer.concat([Buffer.from([0x00, 0xff, 0xfe, 0x80, 0xc0, 0x00]), randomBytes(2048)]),
  },
  {
    title: 'JSON that does not parse',
    contentType: 'application/json',
    body: () => Buffer.from(`{"unterminated": "${n()}", `),
  },
  {
    title: 'a form body that is not valid URL encoding',
    contentType: 'application/x-www-form-urlencoded',
    body: () => Buffer.from(`a=%zz&b=%E0%A4%A&=&&n=${n()}`),
  },
  {
    title: 'JSON declared with a charset it does not have',
    contentType: 'application/json; charset=utf-16',
    body: () => Buffer.from(`{"n":"${n()}"}`),
  },
  {
    title: 'an empty body',
    contentType: 'application/json',
    body: () => Buffer.alloc(0),
  },
];

describeEachStore('Ingest payload storage', (target) => {
  let h: IngestHarness;

  before(async function () {
    h = await startIngestHarness(this, target);
  });

  after(async () => {
    await h?.stop();
  });

  for (const payload of CASES) {
    it(`accepts ${payload.title} and stores it byte-exact with its content type, size and hash`, async () => {
      const { id, path } = await h.createUniqueSource({ name: 'Payloads' });
      const body = payload.body();
      const response = await h.ingest(path, { rawBody: body, headers: { 'content-type': payload.contentType } });
      expect(response.status, response.text).to.equal(200);
      expect(response.body.status).to.equal('received');
      const [stored, ...rest] = await h.events(id);
      expect(rest).to.have.length(0);
      expect(stored!.id).to.equal(response.body.eventId);
      expect(stored!.payload.toString('hex')).to.equal(body.toString('hex'));
      expect(stored!.contentType).to.equal(payload.contentType);
      expect(stored!.payloadHash).to.equal(`sha256:${createHash('sha256').update(body).digest('hex')}`);
    });
  }

  it('accepts a body with no Content-Type at all and stores it byte-exact', async () => {
    const { id, path } = await h.createUniqueSource({ name: 'Payloads' });
    const body = Buffer.from(`no type ${n()}`);
    const response = await h.ingest(path, { rawBody: body });
    expect(response.status, response.text).to.equal(200);
    const [stored] = await h.events(id);
    expect(stored!.payload.equals(body)).to.equal(true);
    expect(stored!.contentType).to.equal(null);
  });
});
