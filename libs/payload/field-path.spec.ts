import { expect } from 'chai';
import { FieldBudget, FieldBudgetExceededError } from './field-budget.js';
import { compileFieldPath, FieldPathError, MAX_RECURSIVE_STEPS, MAX_SELECTORS, selectFields } from './field-path.js';

const budget = (limit = 1_000_000) => new FieldBudget(limit);
const wildcards = (count: number) => `[${Array.from({ length: count }, () => '*').join(',')}]`;
/** Every recursive step and selector a path may have, all of them wildcards: the heaviest path accepted. */
const heaviest = `$..${wildcards(MAX_SELECTORS / 2)}..${wildcards(MAX_SELECTORS / 2)}`;

/** About 1.2 KB of JSON nested 60 objects deep (issue 53's probe). */
function nested60(): unknown {
  let value: unknown = { n: 1, secret: 'tok_live_0123456789' };
  for (let depth = 1; depth < 60; depth += 1) value = { k: 'ab', c: value };
  return { type: 'flood', pad: 'x'.repeat(180), c: value };
}
const values = (root: unknown, path: string) => selectFields(root, compileFieldPath(path), budget()).map((location) => location.value);

describe('compileFieldPath', () => {
  it('accepts names, quoted names, indexes, wildcards, unions and recursive descent', () => {
    for (const path of ['$.a.b', "$['a b']", '$["a"].c', '$.items[0]', '$.items[-1]', '$.items[*].price', '$.*', "$['a','b']", '$[0,2]', '$..number', '$..*', '$..[0]']) {
      expect(() => compileFieldPath(path), path).not.to.throw();
    }
  });

  it('refuses filters, scripts, slices and broken syntax, naming the path and where it fails', () => {
    for (const path of ['$[?(', '$[?(@.a > 1)]', '$[(@.length-1)]', '$.items[0:2]', '$.a[', "$['a", 'a.b', '$.']) {
      expect(() => compileFieldPath(path), path).to.throw(FieldPathError, JSON.stringify(path));
    }
  });

  it(`accepts at most ${MAX_RECURSIVE_STEPS} recursive descents and ${MAX_SELECTORS} selectors, counting each member of a union`, () => {
    expect(() => compileFieldPath('$..a..b')).not.to.throw();
    expect(() => compileFieldPath(heaviest)).not.to.throw();
    expect(() => compileFieldPath('$..a..b..c')).to.throw(FieldPathError, 'has 3 recursive descents (..); at most 2');
    expect(() => compileFieldPath(`$${'..*'.repeat(30)}`)).to.throw(FieldPathError, 'recursive descents');
    expect(() => compileFieldPath(`$${'.a'.repeat(MAX_SELECTORS)}`)).not.to.throw();
    expect(() => compileFieldPath(`$${'.a'.repeat(MAX_SELECTORS + 1)}`)).to.throw(FieldPathError, `has 33 selectors; at most ${MAX_SELECTORS}`);
    expect(() => compileFieldPath(`$.a${wildcards(MAX_SELECTORS)}`)).to.throw(FieldPathError, 'has 33 selectors');
  });
});

describe('selectFields', () => {
  const document = { card: { number: '4111' }, items: [{ price: 1 }, { price: 2 }], nested: { card: { number: '5500' } } };

  it('selects what each kind of segment names', () => {
    expect(values(document, '$.card.number')).to.deep.equal(['4111']);
    expect(values(document, '$.items[*].price')).to.deep.equal([1, 2]);
    expect(values(document, '$.items[-1].price')).to.deep.equal([2]);
    expect(values(document, '$..number')).to.have.members(['4111', '5500']);
    expect(values(document, "$['card','items'][0]")).to.deep.equal([{ price: 1 }]);
    expect(values(document, '$.absent.field')).to.deep.equal([]);
  });

  it('does not see inherited members: constructor, __proto__, toString or hasOwnProperty exist only when the body has them', () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      expect(values({ a: {} }, `$.a['${name}']`), name).to.deep.equal([]);
      expect(values({ a: {} }, `$..['${name}']`), name).to.deep.equal([]);
      expect(values(JSON.parse(`{"a": {"${name}": "own"}}`), `$.a['${name}']`), name).to.deep.equal(['own']);
    }
  });

  it('costs as many visits for a union of the same selector as for its members apart, not as many as the ways to reach a node', () => {
    const spent = (path: string) => {
      const used = budget();
      selectFields(nested60(), compileFieldPath(path), used);
      return used.spent;
    };
    // The second descent starts from every node the first selected, nested in each other: without
    // keeping each once between segments, it would walk about 60 * 60 / 2 subtrees 16 * 16 times.
    expect(spent(heaviest)).to.be.below(16 * spent('$..*..*'));
  });

  it('visits a few thousand nodes for the heaviest path accepted on a 1.2 KB body nested 60 deep', () => {
    const spent = budget();
    const selected = selectFields(nested60(), compileFieldPath(heaviest), spent).map((location) => location.value);
    expect(selected).to.include('tok_live_0123456789');
    expect(spent.spent).to.be.below(10_000);
  });

  it('walks any depth without recursion', () => {
    let deep: unknown = { secret: 'x' };
    for (let level = 0; level < 20_000; level += 1) deep = { a: deep };
    expect(values(deep, '$..secret')).to.deep.equal(['x']);
  });

  it('stops with FieldBudgetExceededError past the budget of visited nodes, shared by the paths it is given to', () => {
    const wide = { list: Array.from({ length: 1000 }, (_, i) => ({ i })) };
    expect(() => selectFields(wide, compileFieldPath('$..*..*'), budget(10_000))).to.throw(FieldBudgetExceededError);
    const shared = budget(6_000);
    selectFields(wide, compileFieldPath('$..i'), shared);
    expect(() => selectFields(wide, compileFieldPath('$..i'), shared)).to.throw(FieldBudgetExceededError);
  });
});
