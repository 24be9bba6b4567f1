import { expect } from 'chai';
import { FieldBudget, FieldBudgetExceededError } from '../payload/field-budget.js';
import { compileFilter, filterIssues, MAX_FILTER_BYTES, type FilterDocument } from './route-filter.js';

const order: FilterDocument = {
  body: { type: 'order.created', amount: 120, currency: 'EUR', tags: ['vip', 'eu'], customer: { id: 'c_1', email: 'ann@example.com', tier: null } },
  headers: { 'x-shop-topic': 'orders/create', 'user-agent': 'Shopify-Captain-Hook' },
  query: { env: 'prod', region: ['eu', 'us'] },
  path: '/ingest/acme/shop',
};

const matches = (filter: unknown, document = order) => compileFilter(filter)(document, new FieldBudget());

describe('route filters', () => {
  describe('matching', () => {
    it('a literal is equality, on nested fields, headers, query and path', () => {
      expect(matches({ body: { type: 'order.created', customer: { id: 'c_1' } } })).to.equal(true);
      expect(matches({ body: { type: 'order.paid' } })).to.equal(false);
      expect(matches({ headers: { 'x-shop-topic': 'orders/create' }, query: { env: 'prod' }, path: '/ingest/acme/shop' })).to.equal(true);
      expect(matches({ body: { customer: { tier: null } } })).to.equal(true);
    });

    it('a literal against an array means contains', () => {
      expect(matches({ body: { tags: 'vip' } })).to.equal(true);
      expect(matches({ body: { tags: 'us' } })).to.equal(false);
      expect(matches({ query: { region: 'us' } })).to.equal(true);
    });

    it('compares numbers with numbers and strings with strings, never across types', () => {
      expect(matches({ body: { amount: { $gt: 100, $lte: 120 } } })).to.equal(true);
      expect(matches({ body: { amount: { $lt: 120 } } })).to.equal(false);
      expect(matches({ body: { amount: { $gte: '100' } } })).to.equal(false);
      expect(matches({ body: { currency: { $gte: 'EUR', $lt: 'USD' } } })).to.equal(true);
    });

    it('$eq, $neq, $in, $nin, $exists', () => {
      expect(matches({ body: { currency: { $eq: 'EUR' } } })).to.equal(true);
      expect(matches({ body: { currency: { $neq: 'EUR' } } })).to.equal(false);
      expect(matches({ body: { currency: { $in: ['USD', 'EUR'] } } })).to.equal(true);
      expect(matches({ body: { currency: { $nin: ['USD', 'EUR'] } } })).to.equal(false);
      expect(matches({ body: { tags: { $in: ['eu', 'apac'] } } })).to.equal(true);
      expect(matches({ body: { customer: { email: { $exists: true }, phone: { $exists: false } } } })).to.equal(true);
      expect(matches({ body: { discount: { $exists: true } } })).to.equal(false);
    });

    it('$startsWith, $endsWith, $contains on text, $contains on arrays', () => {
      expect(matches({ body: { type: { $startsWith: 'order.', $endsWith: '.created' } } })).to.equal(true);
      expect(matches({ headers: { 'user-agent': { $contains: 'Captain' } } })).to.equal(true);
      expect(matches({ body: { tags: { $contains: 'eu' } } })).to.equal(true);
      expect(matches({ body: { amount: { $startsWith: '1' } } })).to.equal(false);
    });

    it('$and, $or and $not at the root and at any level', () => {
      expect(matches({ $or: [{ body: { type: 'order.paid' } }, { headers: { 'x-shop-topic': 'orders/create' } }] })).to.equal(true);
      expect(matches({ $and: [{ body: { amount: { $gt: 100 } } }, { body: { currency: 'USD' } }] })).to.equal(false);
      expect(matches({ body: { $not: { currency: 'USD' } } })).to.equal(true);
      expect(matches({ body: { amount: { $or: [{ $lt: 10 }, { $gt: 100 }] } } })).to.equal(true);
      expect(matches({ body: { amount: { $not: { $gt: 100 } } } })).to.equal(false);
    });

    it('a missing field matches nothing but $exists: false and negations', () => {
      expect(matches({ body: { refund: { id: 'r_1' } } })).to.equal(false);
      expect(matches({ body: { refund: { $neq: 'x' } } })).to.equal(true);
    });

    it('reads a raw-text body as text', () => {
      expect(matches({ body: { $contains: 'hello' } }, { ...order, body: 'say hello' })).to.equal(true);
    });

    it('null and {} take every event', () => {
      expect(matches(null)).to.equal(true);
      expect(matches({})).to.equal(true);
    });
  });

  describe('on what a hostile sender or tenant can send', () => {
    it('reads own fields only: inherited members such as constructor, __proto__, toString and hasOwnProperty are absent', () => {
      for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
        expect(matches({ headers: { [name]: { $exists: true } } }), `headers.${name}`).to.equal(false);
        expect(matches({ body: { customer: { [name]: { $exists: true } } } }), `body.customer.${name}`).to.equal(false);
        expect(matches({ [name]: { $exists: false } }), `${name} at the root`).to.equal(true);
      }
    });

    it('finds those names where the event holds them itself', () => {
      // Parsed, as bodies and stored filters are: a literal `__proto__:` would set the prototype instead.
      const fields = '{"__proto__": "p", "constructor": "c", "toString": "t", "hasOwnProperty": "h"}';
      const held = { ...order, body: JSON.parse(fields) };
      expect(matches(JSON.parse(`{"body": ${fields}}`), held)).to.equal(true);
      expect(matches(JSON.parse('{"body": {"__proto__": "other"}}'), held)).to.equal(false);
    });

    it('counts each field looked up and each array item compared against the event budget, and stops past it', () => {
      const long = { ...order, body: { tags: Array.from({ length: 1000 }, (_, i) => `t${i}`) } };
      const budget = new FieldBudget(10_000);
      expect(compileFilter({ body: { tags: 'absent' } })(long, budget)).to.equal(false);
      expect(budget.spent).to.equal(2 + 1000);
      const filter = compileFilter({ $or: Array.from({ length: 20 }, (_, i) => ({ body: { tags: `absent-${i}` } })) });
      expect(() => filter(long, new FieldBudget(10_000))).to.throw(FieldBudgetExceededError);
    });
  });

  describe('faults, each with its path', () => {
    it('an unknown operator', () => {
      const [issue, ...more] = filterIssues({ body: { amount: { $between: [1, 2] } } });
      expect(more).to.deep.equal([]);
      expect(issue!.path).to.deep.equal(['body', 'amount', '$between']);
      expect(issue!.message).to.match(/^is not an operator \(use one of \$eq .*\$contains\)$/);
    });

    it('wrong operand types, all of them at once', () => {
      const issues = filterIssues({ $or: [{ body: { amount: { $gt: true } } }, { body: { tags: { $in: 'vip' } } }], path: { $exists: 'yes' }, query: { x: { $startsWith: 3 } } });
      expect(issues.map((issue) => issue.path)).to.deep.equal([
        ['$or', 0, 'body', 'amount', '$gt'],
        ['$or', 1, 'body', 'tags', '$in'],
        ['path', '$exists'],
        ['query', 'x', '$startsWith'],
      ]);
    });

    it('$and and $or need a non-empty array; a field value cannot be an array', () => {
      expect(filterIssues({ $and: [] })[0]!.path).to.deep.equal(['$and']);
      expect(filterIssues({ $or: { a: 1 } })[0]!.path).to.deep.equal(['$or']);
      expect(filterIssues({ body: { tags: ['vip'] } })[0]!.path).to.deep.equal(['body', 'tags']);
    });

    it('deeper than 10 levels', () => {
      let deep: Record<string, unknown> = { leaf: 1 };
      for (let level = 0; level < 10; level += 1) deep = { [`l${level}`]: deep };
      const [issue] = filterIssues(deep);
      expect(issue!.path).to.have.length(10);
      expect(issue!.message).to.match(/deeper than 10/);
      let nine: Record<string, unknown> = { leaf: 1 };
      for (let level = 0; level < 8; level += 1) nine = { [`l${level}`]: nine };
      expect(filterIssues(nine)).to.deep.equal([]);
    });

    it('larger than 10 KB', () => {
      const large = { body: { $in: Array.from({ length: 2000 }, (_, n) => `value-${n}`) } };
      expect(JSON.stringify(large).length).to.be.above(MAX_FILTER_BYTES);
      expect(filterIssues(large)).to.deep.equal([{ path: [], message: `is ${JSON.stringify(large).length} bytes; at most ${MAX_FILTER_BYTES}` }]);
    });

    it('not an object', () => {
      expect(filterIssues(['a'])).to.deep.equal([{ path: [], message: 'must be an object or null' }]);
    });
  });
});

