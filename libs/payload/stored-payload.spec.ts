import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { createSecretBox } from '../secrets/secret-box.js';
import { FieldBudget } from './field-budget.js';
import { openStoredPayload, SEARCH_TEXT_LIMIT, storedPayload } from './stored-payload.js';

describe('storedPayload', () => {
  const secrets = createSecretBox(randomBytes(32));
  const plain = { encryptFields: [], maskFields: [] };
  const json = 'application/json';

  it('stores a body as received when the source names no fields, searchable as its text', () => {
    const body = Buffer.from('{"a": 1,  "b":"Two"}');
    const stored = storedPayload(body, json, plain, secrets);
    expect(stored).to.deep.equal({ bytes: body, sealed: false, searchText: '{"a": 1,  "b":"Two"}' });
  });

  it('seals the whole body when fields are to be encrypted, and opens it byte for byte', () => {
    // Spacing and a number beyond double precision: a parse and re-serialize would change both.
    const body = Buffer.from('{ "card": {"number": "4111111111111111"}, "id": 12345678901234567890 }');
    const stored = storedPayload(body, json, { encryptFields: ['$.card.number'], maskFields: [] }, secrets);
    expect(stored.sealed).to.equal(true);
    expect(stored.bytes.toString()).not.to.include('4111111111111111');
    expect(openStoredPayload(stored.bytes, stored.sealed, secrets).equals(body)).to.equal(true);
  });

  it('opens sealed binary bodies exactly', () => {
    const body = randomBytes(300);
    const stored = storedPayload(body, 'application/octet-stream', { encryptFields: ['$.x'], maskFields: [] }, secrets);
    expect(openStoredPayload(stored.bytes, true, secrets).equals(body)).to.equal(true);
  });

  it('leaves encrypted and masked values out of the search text, and keeps the rest', () => {
    const body = Buffer.from(JSON.stringify({ card: { number: '4111111111111111' }, email: 'ann@example.com', order: 'ord-77' }));
    const { searchText } = storedPayload(body, json, { encryptFields: ['$.card.number'], maskFields: ['$.email'] }, secrets);
    expect(searchText).to.include('ord-77');
    expect(searchText).not.to.include('4111111111111111');
    expect(searchText).not.to.include('ann@example.com');
  });

  it('hides masked form fields from search too', () => {
    const { searchText } = storedPayload(Buffer.from('token=abc123&user=ann'), 'application/x-www-form-urlencoded', { encryptFields: [], maskFields: ['$.token'] }, secrets);
    expect(searchText).to.include('user=ann');
    expect(searchText).not.to.include('abc123');
  });

  it('makes nothing searchable when fields are named but the body cannot be parsed to find them', () => {
    const { searchText } = storedPayload(Buffer.from('card=4111 in plain text'), 'text/plain', { encryptFields: [], maskFields: ['$.card'] }, secrets);
    expect(searchText).to.equal(null);
  });

  it('makes nothing searchable when locating the hidden fields runs past the event budget, and still stores the body', () => {
    const body = Buffer.from(JSON.stringify({ list: Array.from({ length: 1000 }, (_, i) => ({ i, email: `ann${i}@example.com` })) }));
    const policy = { encryptFields: [], maskFields: ['$..email'] };
    expect(storedPayload(body, json, policy, secrets, new FieldBudget(10_000)).searchText).to.include('"****"');
    const spent = new FieldBudget(10_000);
    spent.spend(9_000);
    expect(storedPayload(body, json, policy, secrets, spent)).to.deep.equal({ bytes: body, sealed: false, searchText: null });
  });

  it('seals a body with encrypted fields whole, and leaves nothing of it searchable past the event budget', () => {
    const body = Buffer.from(JSON.stringify({ list: Array.from({ length: 1000 }, (_, i) => ({ i, card: `4111-${i}` })) }));
    const stored = storedPayload(body, json, { encryptFields: ['$..card'], maskFields: [] }, secrets, new FieldBudget(1_000));
    expect(stored.sealed).to.equal(true);
    expect(stored.searchText).to.equal(null);
    expect(openStoredPayload(stored.bytes, true, secrets).equals(body)).to.equal(true);
  });

  it('makes binary bodies and text with NUL characters unsearchable', () => {
    expect(storedPayload(Buffer.from([0xff, 0xfe, 0x00]), 'application/octet-stream', plain, secrets).searchText).to.equal(null);
    expect(storedPayload(Buffer.from('a\u0000b'), 'text/plain', plain, secrets).searchText).to.equal(null);
  });

  it('keeps only the start of a very long text for search', () => {
    const { searchText } = storedPayload(Buffer.from('x'.repeat(SEARCH_TEXT_LIMIT + 10)), 'text/plain', plain, secrets);
    expect(searchText).to.have.length(SEARCH_TEXT_LIMIT);
  });
});
