import { expect } from 'chai';
import { compileFieldPath, FieldBudgetExceededError, FieldPathError, selectFields } from './field-path.js';

const budget = (limit = 1_000_000) => ({ remaining: limit, limit });
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

  it('does not see inherited members: a field named constructor exists only when the body has it', () => {
    expect(values({}, '$.constructor')).to.deep.equal([]);
    expect(values({ constructor: '1' }, '$.constructor')).to.deep.equal(['1']);
  });

  it('walks any depth without recursion', () => {
    let deep: unknown = { secret: 'x' };
    for (let level = 0; level < 20_000; level += 1) deep = { a: deep };
    expect(values(deep, '$..secret')).to.deep.equal(['x']);
  });

  it('stops with FieldBudgetExceededError past its budget of visited nodes', () => {
    const wide = { list: Array.from({ length: 1000 }, (_, i) => ({ i })) };
    expect(() => selectFields(wide, compileFieldPath('$..*..*'), budget(10_000))).to.throw(FieldBudgetExceededError);
  });
});
