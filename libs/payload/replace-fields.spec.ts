import { expect } from 'chai';
import { parsePayload, serializePayload } from './payload-document.js';
import { FieldBudget } from './field-budget.js';
import { MASK, replaceFields } from './replace-fields.js';

describe('replaceFields', () => {
  const document = { kind: 'json' as const, value: { card: { number: '4111', cvc: '123' }, items: [{ sku: 'a', price: 1 }, { sku: 'b', price: 2 }] } };

  it('replaces the value each JSONPath selects with ****, through nesting and wildcards', () => {
    const replaced = replaceFields(document, ['$.card.number', '$.items[*].price']);
    expect(replaced.value).to.deep.equal({ card: { number: MASK, cvc: '123' }, items: [{ sku: 'a', price: MASK }, { sku: 'b', price: MASK }] });
  });

  it('leaves the original untouched', () => {
    replaceFields(document, ['$.card.number']);
    expect(document.value.card.number).to.equal('4111');
  });

  it('changes nothing for a path that selects nothing', () => {
    expect(replaceFields(document, ['$.absent.field']).value).to.deep.equal(document.value);
  });

  it('replaces the whole document for a path that selects the root', () => {
    expect(replaceFields(document, ['$']).value).to.equal(MASK);
  });

  it('works on form fields, repeated names included', () => {
    const form = { kind: 'form' as const, value: { token: 'secret', tag: ['x', 'y'] } };
    expect(replaceFields(form, ['$.token', '$.tag[1]']).value).to.deep.equal({ token: MASK, tag: ['x', MASK] });
  });
});

describe('replaceFields on what a hostile sender or tenant can send', () => {
  it('masks a form field named constructor (form fields have no prototype)', () => {
    const form = parsePayload(Buffer.from('constructor=1&token=abc'), 'application/x-www-form-urlencoded');
    expect(form?.kind).to.equal('form');
    const replaced = replaceFields(form as Exclude<typeof form, null | { kind: 'unreadable' }>, ['$.token']);
    expect(serializePayload(replaced).toString()).to.equal('constructor=1&token=****');
  });

  it('masks the whole document for a path that cannot be compiled (one stored before paths were checked, or past today\'s limits)', () => {
    expect(replaceFields({ kind: 'json', value: { a: 1 } }, ['$[?(']).value).to.equal(MASK);
    expect(replaceFields({ kind: 'json', value: { a: 1 } }, ['$..a..a..a']).value).to.equal(MASK);
  });

  it('masks the whole document when locating the fields runs past the budget, and the budget is shared by its paths', () => {
    const wide = { kind: 'json' as const, value: { list: Array.from({ length: 1000 }, (_, i) => ({ i, secret: `s${i}` })) } };
    expect(replaceFields(wide, ['$..secret'], new FieldBudget(10_000)).value).not.to.equal(MASK);
    expect(replaceFields(wide, ['$..secret', '$..i'], new FieldBudget(10_000)).value).to.equal(MASK);
  });

  it('masks own fields named __proto__, constructor, toString or hasOwnProperty, and sees no inherited ones', () => {
    const document = { kind: 'json' as const, value: JSON.parse('{"__proto__": {"card": "4111"}, "constructor": "c", "toString": "t", "hasOwnProperty": "h", "safe": 1}') };
    const replaced = replaceFields(document, ['$.__proto__.card', '$.constructor', '$.toString', '$.hasOwnProperty']);
    expect(serializePayload(replaced).toString()).to.equal('{"__proto__":{"card":"****"},"constructor":"****","toString":"****","hasOwnProperty":"****","safe":1}');
    const plain = { kind: 'json' as const, value: { safe: 1 } };
    expect(replaceFields(plain, ['$.constructor', '$.toString', "$['__proto__']", '$..hasOwnProperty']).value).to.deep.equal({ safe: 1 });
  });
});
