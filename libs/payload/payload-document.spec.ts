import { expect } from 'chai';
import { exceedsDepth, MAX_FIELD_BYTES, MAX_FIELD_DEPTH, parsePayload } from './payload-document.js';

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('parsePayload', () => {
  it(`reads JSON nested up to ${MAX_FIELD_DEPTH} levels, and calls deeper bodies unreadable`, () => {
    expect(parsePayload(Buffer.from(nested(MAX_FIELD_DEPTH)), 'application/json')?.kind).to.equal('json');
    expect(parsePayload(Buffer.from(nested(3000)), 'application/json')).to.deep.equal({ kind: 'unreadable', of: 'json', reason: `nested deeper than ${MAX_FIELD_DEPTH} levels` });
  });

  it('calls bodies beyond the size bound unreadable without parsing them', () => {
    const body = Buffer.alloc(MAX_FIELD_BYTES + 1, 0x20);
    expect(parsePayload(body, 'application/json')?.kind).to.equal('unreadable');
  });

  it('parses form bodies into objects without a prototype', () => {
    const form = parsePayload(Buffer.from('constructor=1&__proto__=2'), 'application/x-www-form-urlencoded');
    expect(Object.getPrototypeOf(form!.kind === 'form' ? form!.value : {})).to.equal(null);
    expect(Object.entries((form as { value: object }).value)).to.deep.equal([['constructor', '1'], ['__proto__', '2']]);
  });
});

describe('exceedsDepth', () => {
  it('counts objects and arrays, not scalars', () => {
    expect(exceedsDepth({ a: [1] }, 2)).to.equal(false);
    expect(exceedsDepth({ a: [[1]] }, 2)).to.equal(true);
    expect(exceedsDepth('text', 0)).to.equal(false);
  });
});
