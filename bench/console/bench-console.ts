/**
 * The console's events page over a large store, in Debian's Chromium: time from choosing a page of 100
 * events (setting the address) to the table of 100 rows drawn, against a 1,000,000-event SQLite store
 * seeded with the API bench's seeder. Target: under 500 ms.
 * Beside it, from the same run: the API request alone (node, no browser) and a bare node:http page that
 * fetches the same 100 rows as static JSON and draws them (the floor of fetch + DOM in this browser).
 *
 * Run: node --import tsx bench/console/bench-console.ts [--events 1000000] [--iterations 20]
 * Needs the built console (npm run build) and /usr/bin/chromium.
 */
import fs from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { startRelay } from '../../apps/relay/relay.js';
import { loadConfig } from '../../libs/config/config.js';
import { createLogger } from '../../libs/logging/logger.js';
import { nearestRank } from '../../libs/stats/nearest-rank.js';
import { openChromium } from '../../libs/testing/browser.js';
import { customerEmail, seedEvents } from '../api/seed-events.js';
import { TEST_RELAY_ENV } from '../../libs/testing/test-relay-env.js';

const { values: args } = parseArgs({ options: { events: { type: 'string', default: '1000000' }, iterations: { type: 'string', default: '20' } } });
const EVENTS = Number(args.events);
const ITERATIONS = Number(args.iterations);
const API_KEY = 'bench-console-key-0123456789';
const TARGET_MS = 500;
const SOURCES = 20;

/**
 * Runs in the page: leaves for a page that calls no API, then sets `hash` and waits (frame by frame)
 * for a table of events to be drawn; answers the milliseconds and the row count.
 */
const DRAW_TIMER = `async ({ hash, table }) => {
  const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
  location.hash = '#/bench-idle';
  while (document.querySelector(table)) await frame();
  const start = performance.now();
  location.hash = hash;
  for (;;) {
    await frame();
    const drawn = document.querySelector(table);
    const alert = document.querySelector('[role=alert]');
    if (alert) throw new Error(alert.textContent);
    if (drawn) {
      await frame();
      return { ms: performance.now() - start, rows: drawn.querySelectorAll('tbody tr').length };
    }
  }
}`;

/** The bare page: on a hash change, fetch the rows and draw them with plain DOM calls. */
const BARE_PAGE = `<!doctype html><body><script>
addEventListener('hashchange', async () => {
  document.body.replaceChildren();
  if (!location.hash.startsWith('#/events')) return;
  const { data } = await (await fetch('/rows')).json();
  const table = document.createElement('table');
  table.className = 'events';
  const body = table.createTBody();
  for (const event of data) {
    const row = body.insertRow();
    for (const value of [event.id, event.sourceId, event.status, event.receivedAt, event.payloadSize, event.deliveriesCount]) row.insertCell().textContent = value;
  }
  document.body.append(table);
});
</script></body>`;

const figures = (times: number[]) => {
  const sorted = [...times].sort((a, b) => a - b);
  return { 'p50 ms': nearestRank(sorted, 50).toFixed(1), 'p99 ms': nearestRank(sorted, 99).toFixed(1), 'max ms': sorted.at(-1)!.toFixed(1) };
};

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-bench-console-'));
const relay = await startRelay(
  loadConfig({ ...TEST_RELAY_ENV, PORT: '0', HOST: '127.0.0.1', RELAY_ROLE: 'api', RELAY_DATA_DIR: dataDir, RELAY_API_KEY: API_KEY, RELAY_ORG: 'bench', RELAY_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') }),
  { logger: createLogger({ level: 'silent' }) },
);
const api = async (method: string, apiPath: string, body?: unknown) => {
  const response = await request(`${relay.url}/api${apiPath}`, {
    method: method as 'GET',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return (await response.body.json()) as any;
};
const bare = createServer();
const browser = await openChromium();
try {
  const sourceIds: string[] = [];
  for (let i = 0; i < SOURCES; i += 1) sourceIds.push((await api('POST', '/sources', { name: `Source ${i}`, slug: `source-${i}` })).id);
  const loadStart = performance.now();
  await seedEvents(relay.store.sql, {
    orgId: relay.bootstrap.org.id,
    sourceIds,
    count: EVENTS,
    startMs: Date.now() - EVENTS * 1000,
    stepMs: 1000,
    progress: (done) => process.stdout.write(`\rinserted ${done.toLocaleString('en')} / ${EVENTS.toLocaleString('en')} events`),
  });
  await relay.store.sql.run('ANALYZE');
  console.log(`\nloaded in ${((performance.now() - loadStart) / 1000).toFixed(1)} s`);

  const queries = [
    { name: 'page 1', query: 'pageSize=100' },
    { name: 'page 500', query: 'pageSize=100&page=500' },
    { name: 'one source', query: `pageSize=100&sourceId=${sourceIds[3]}` },
    { name: 'search (one customer)', query: `pageSize=100&search=${encodeURIComponent(customerEmail(4242))}` },
  ];
  const page = browser.page;
  await page.goto(`${relay.url}/console`);
  await page.getByLabel('API key').fill(API_KEY);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Console' }).waitFor();

  let rowsJson = '';
  bare.on('request', (req, res) => {
    res.setHeader('content-type', req.url === '/rows' ? 'application/json' : 'text/html');
    res.end(req.url === '/rows' ? rowsJson : BARE_PAGE);
  });
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`;
  const barePage = await browser.context.newPage();
  await barePage.goto(bareUrl);

  const rows: Record<string, string | number>[] = [];
  for (const { name, query } of queries) {
    const apiTimes: number[] = [];
    const consoleTimes: number[] = [];
    const bareTimes: number[] = [];
    let drawnRows = 0;
    for (let i = 0; i < ITERATIONS; i += 1) {
      const start = performance.now();
      rowsJson = JSON.stringify(await api('GET', `/events?${query}`));
      apiTimes.push(performance.now() - start);
      // A tab in the background gets no animation frames: each is brought to the front for its draw.
      await page.bringToFront();
      const drawn = (await page.evaluate(`(${DRAW_TIMER})(${JSON.stringify({ hash: `#/events?${query.replace('pageSize=100&', '').replace('pageSize=100', '')}`, table: 'table.events' })})`)) as { ms: number; rows: number };
      consoleTimes.push(drawn.ms);
      drawnRows = drawn.rows;
      await barePage.bringToFront();
      const floor = (await barePage.evaluate(`(${DRAW_TIMER})(${JSON.stringify({ hash: `#/events?${i}`, table: 'table.events' })})`)) as { ms: number };
      bareTimes.push(floor.ms);
    }
    const consoleFigures = figures(consoleTimes);
    rows.push({ query: name, rows: drawnRows, ...Object.fromEntries(Object.entries(figures(apiTimes)).map(([k, v]) => [`API ${k}`, v])), ...Object.fromEntries(Object.entries(figures(bareTimes)).map(([k, v]) => [`bare ${k}`, v])), ...Object.fromEntries(Object.entries(consoleFigures).map(([k, v]) => [`console ${k}`, v])), verdict: Number(consoleFigures['p99 ms']) < TARGET_MS ? `ok (< ${TARGET_MS} ms)` : `over ${TARGET_MS} ms` });
  }
  console.log(`${EVENTS.toLocaleString('en')} events (SQLite), ${ITERATIONS} draws per query, 100 rows per page; API = the request alone from node, bare = node:http page drawing the same rows`);
  console.table(rows);
} finally {
  await browser.close();
  bare.close();
  await relay.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
