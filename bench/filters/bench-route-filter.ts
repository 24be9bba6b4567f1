/**
 * What a route filter costs the router per event, for a filter of 10 conditions (target: at most 20 µs).
 * Prints the compiled filter's match alone, and with building the document it reads (the body parsed
 * from its bytes, as the router does once per event for all of a source's filtered routes). Beside them,
 * from the same run: the same 10 conditions written by hand in TypeScript, the floor any filter
 * language meets, and JSON.parse of the body alone. (A micro-bench: no HTTP, so no node:http baseline.)
 *
 *   node --import tsx bench/filters/bench-route-filter.ts [--events 200000]
 */
import { parseArgs } from 'node:util';
import { filterDocument } from '../../libs/filters/filter-document.js';
import { compileFilter, type FilterDocument } from '../../libs/filters/route-filter.js';
import { FieldBudget } from '../../libs/payload/field-budget.js';

const { values: args } = parseArgs({ options: { events: { type: 'string', default: '200000' } } });
const events = Number(args.events);

/** Ten conditions over body, headers, query and path, with the operators a user reaches for. */
const FILTER = {
  body: {
    type: { $startsWith: 'order.' },
    amount: { $gte: 100, $lt: 10_000 },
    currency: { $in: ['EUR', 'USD', 'GBP'] },
    customer: { tier: { $neq: 'blocked' }, email: { $exists: true } },
    tags: 'vip',
  },
  headers: { 'x-shop-topic': { $endsWith: '/create' } },
  $or: [{ query: { env: 'prod' } }, { path: { $contains: '/shop' } }],
};

const handWritten = (d: FilterDocument): boolean => {
  const body = d.body as Record<string, any>;
  const topic = d.headers['x-shop-topic'];
  return (
    typeof body.type === 'string' && body.type.startsWith('order.') &&
    typeof body.amount === 'number' && body.amount >= 100 && body.amount < 10_000 &&
    ['EUR', 'USD', 'GBP'].includes(body.currency) &&
    body.customer?.tier !== 'blocked' && body.customer?.email !== undefined &&
    Array.isArray(body.tags) && body.tags.includes('vip') &&
    typeof topic === 'string' && topic.endsWith('/create') &&
    (d.query.env === 'prod' || d.path.includes('/shop'))
  );
};

const bodies = Array.from({ length: 1000 }, (_, n) =>
  Buffer.from(
    JSON.stringify({
      id: `evt_${n}`,
      type: n % 4 === 0 ? 'refund.created' : 'order.created',
      amount: (n * 37) % 20_000,
      currency: ['EUR', 'USD', 'JPY'][n % 3],
      tags: n % 2 ? ['vip', 'eu'] : ['eu'],
      customer: { id: `c_${n}`, email: `c${n}@example.com`, tier: n % 10 === 0 ? 'blocked' : 'gold', address: { city: 'Lyon', zip: '69001' } },
      items: Array.from({ length: 5 }, (_, i) => ({ sku: `sku-${i}`, quantity: i + 1, price: 9.99 * (i + 1) })),
    }),
  ),
);
const webhook = (body: Buffer) => ({
  body,
  contentType: 'application/json',
  headers: { 'content-type': 'application/json', 'x-shop-topic': 'orders/create', 'user-agent': 'Shopify-Captain-Hook' },
  query: { env: 'prod' },
  path: '/ingest/acme/shop',
});
const documents = bodies.map((body) => filterDocument(webhook(body)));
const filter = compileFilter(FILTER);

/** µs per event over `events` calls, after a warm-up; the count of matches keeps the work from being optimised away. */
function measure(run: (index: number) => boolean): { microseconds: number; matched: number } {
  for (let i = 0; i < 20_000; i += 1) run(i % 1000);
  let matched = 0;
  const startedAt = process.hrtime.bigint();
  for (let i = 0; i < events; i += 1) if (run(i % 1000)) matched += 1;
  return { microseconds: Number(process.hrtime.bigint() - startedAt) / 1000 / events, matched };
}

const lines: [string, ReturnType<typeof measure>][] = [
  ['compiled filter, match only', measure((i) => filter(documents[i]!, new FieldBudget()))],
  ['compiled filter, document + match', measure((i) => filter(filterDocument(webhook(bodies[i]!)), new FieldBudget()))],
  ['baseline: hand-written predicate', measure((i) => handWritten(documents[i]!))],
  ['baseline: JSON.parse of the body', measure((i) => JSON.parse(bodies[i]!.toString('utf8')) !== null)],
];
console.log(`route filter of 10 conditions, ${events} events (bodies of ${bodies[0]!.length} bytes)`);
for (const [name, { microseconds, matched }] of lines) console.log(`${name.padEnd(38)} ${microseconds.toFixed(3).padStart(8)} µs/event  (${matched} matched)`);
const worst = lines[1]![1].microseconds;
console.log(`target <= 20 µs per event: ${worst <= 20 ? 'met' : 'NOT met'} (${worst.toFixed(3)} µs with the document built)`);
