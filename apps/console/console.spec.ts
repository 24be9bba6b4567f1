import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { BACKEND_TARGETS } from '../../libs/testing/backend-targets.js';
import { launchChromium, screenshotFolder, unnamedControls, type TestBrowser } from '../../libs/testing/browser.js';
import { respond, startHttpSink, type HttpSink } from '../../libs/testing/http-sink.js';
import { startRelayHarness, TEST_API_KEY, type RelayHarness } from '../../testing/relay-harness.js';
import { isDefined, waitFor } from '../../libs/testing/wait-for.js';

/**
 * The console driven in Debian's Chromium against a whole relay, as an operator uses it. One relay and
 * one browser for the suite: each step builds on the one before (sign in, create, send, find, replay).
 * It runs on the embedded default only: the console calls nothing but the public API, whose behaviour
 * on PostgreSQL and Kafka the API and pipeline suites cover.
 */
describe('web console in a real browser', function () {
  this.timeout(60_000);
  let harness: RelayHarness;
  let browser: TestBrowser;
  let page: Page;
  let receiver: HttpSink;
  let failing: HttpSink;
  const shots = screenshotFolder('console');
  const SECRET = 'console-test-secret';
  const TOKEN = `needle-${Date.now().toString(36)}`;
  const ids: { source?: string; destination?: string; event?: string } = {};

  before(async function () {
    browser = await launchChromium(this);
    page = browser.page;
    harness = await startRelayHarness(this, BACKEND_TARGETS[0]!);
    receiver = await startHttpSink([respond(200, { body: 'thanks' })]);
    failing = await startHttpSink([respond(500, { body: 'down' })]);
  });
  after(async () => {
    await browser?.close();
    await receiver?.close();
    await failing?.close();
    await harness?.stop();
  });

  const nav = (name: string) => page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true });
  const field = (label: string) => page.getByLabel(label, { exact: true });
  const button = (name: string) => page.getByRole('button', { name, exact: true });
  const shoot = (name: string) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
  const alertText = async () => (await page.getByRole('alert').first().textContent()) ?? '';
  /** Every control on the page, as Chromium's accessibility tree names it. */
  const expectNamedControls = async () => expect(await unnamedControls(page), 'controls without an accessible name').to.deep.equal([]);

  it('refuses a wrong key with the API message, keeping what was typed, then signs in with the key kept in session storage only', async () => {
    await page.goto(`${harness.relay.url}/console`);
    // DESIGN section 6: a text field named "API key" and a button "Sign in".
    const keyField = page.getByRole('textbox', { name: 'API key', exact: true });
    await keyField.fill('not-a-key-at-all-0000');
    await button('Sign in').click();
    expect(await alertText()).to.contain('UNAUTHORIZED');
    expect(await keyField.inputValue()).to.equal('not-a-key-at-all-0000');
    await expectNamedControls();
    await shoot('sign-in');

    await keyField.fill(TEST_API_KEY);
    await button('Sign in').click();
    for (const name of ['Overview', 'Sources', 'Destinations', 'Routes', 'Events', 'Replays']) await nav(name).waitFor();
    // Evaluated in the page (as text: this file is compiled without the DOM types).
    const storage = await page.evaluate('({ session: Object.values(sessionStorage), local: Object.values(localStorage), cookie: document.cookie })');
    expect(storage).to.deep.equal({ session: [TEST_API_KEY], local: [], cookie: '' });
    await page.getByText("Every destination's circuit is closed.").waitFor();
    await expectNamedControls();
    await shoot('overview');
  });

  it('creates a source with codehost verification, showing the API error for a bad slug without losing the form', async () => {
    await nav('Sources').click();
    await button('New source').click();
    await field('Name').fill('Shop orders');
    await field('Slug').fill('Shop Orders');
    await field('Verification type').selectOption('codehost');
    await field('Signing secret').fill(SECRET);
    await field('Mask fields (one JSONPath per line)').fill('$.customer.email');
    await button('Create source').click();
    expect(await alertText()).to.contain('INVALID_SLUG');
    expect(await field('Name').inputValue()).to.equal('Shop orders');
    expect(await field('Signing secret').inputValue()).to.equal(SECRET);

    await field('Slug').fill('shop-orders');
    await button('Create source').click();
    await page.getByRole('heading', { name: 'Shop orders', level: 1 }).waitFor();
    ids.source = page.url().split('/sources/')[1];
    expect(ids.source).to.match(/^src_/);
    await page.getByText(`/ingest/default/shop-orders`).first().waitFor();
    await expectNamedControls();
    await shoot('source');
  });

  it('creates a destination and a route from the source to it, showing the filter tester\'s error without losing the filter', async () => {
    await nav('Destinations').click();
    await button('New destination').click();
    await field('Name').fill('Orders service');
    await field('URL').fill(`${receiver.url}/hooks`);
    await field('Headers (one Name: value per line)').fill('X-Team: billing');
    await field('Ordering').selectOption('source');
    await button('Create destination').click();
    await page.getByRole('heading', { name: 'Orders service', level: 1 }).waitFor();
    ids.destination = page.url().split('/destinations/')[1];
    expect(ids.destination).to.match(/^dst_/);
    const created = (await harness.api('GET', `/api/destinations/${ids.destination}`)).body;
    expect(created).to.include({ ordering: 'source', method: 'POST' });
    expect(created.headers, 'header values are secrets, masked').to.deep.equal({ 'X-Team': '****' });

    await nav('Routes').click();
    await field('From source').selectOption({ label: 'Shop orders' });
    await field('To destination').selectOption({ label: 'Orders service' });
    await field('Filter (JSON, optional)').fill('{"body": {"type": "order.created"}}');
    await field('Event id to test the filter on').fill('evt_unknown');
    await button('Test filter').click();
    expect(await alertText()).to.contain('NOT_FOUND');
    expect(await field('Filter (JSON, optional)').inputValue()).to.equal('{"body": {"type": "order.created"}}');
    await field('Filter (JSON, optional)').fill('');
    await button('Create route').click();
    await page.getByRole('button', { name: 'Delete route Shop orders to Orders service' }).waitFor();
    await expectNamedControls();
    await shoot('routes');
  });

  it('finds a signed webhook sent over HTTP by searching its payload, and shows its delivery on the timeline', async () => {
    const body = JSON.stringify({ type: 'order.created', order: { id: 'ord-1', note: TOKEN }, customer: { email: 'ada@example.com' } });
    const signature = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
    const ingest = await fetch(`${harness.relay.url}/ingest/default/shop-orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature },
      body,
    });
    expect(ingest.status).to.equal(200);
    ids.event = ((await ingest.json()) as { eventId: string }).eventId;
    await receiver.waitForRequests(1);

    await nav('Events').click();
    await field('Search payload').fill(TOKEN);
    await button('Apply filters').click();
    const row = page.getByRole('link', { name: ids.event });
    await row.waitFor();
    // The unfiltered list may still be on screen (it holds the same event) while the search loads.
    await waitFor('the search results, one row', () => page.locator('table.events tbody tr').count(), (rows) => rows === 1, 10_000);
    expect(await nav('Events').getAttribute('aria-current')).to.equal('page');
    await expectNamedControls();
    await shoot('events');

    await row.click();
    await page.getByText('attempt 1 success 200').waitFor();
    const payload = (await page.getByLabel('Payload').textContent()) ?? '';
    expect(payload).to.contain(TOKEN).and.contain('****').and.not.contain('ada@example.com');
    expect(await page.locator('.facts').first().textContent()).to.contain('valid');
    await expectNamedControls();
    await shoot('event');
  });

  it('replays the event and shows its second delivery', async () => {
    await button('Replay').click();
    await page.getByText('1 new deliveries').waitFor();
    await receiver.waitForRequests(2);
    await waitFor('the second delivery shown delivered', async () => {
      await button('Refresh').click();
      return (await page.getByText(/Delivery 2 to Orders service \(delivered\): attempt 1 success 200/).count()) > 0 || undefined;
    }, isDefined);
    expect(await page.locator('tr.delivery').count()).to.equal(2);
    await shoot('event-replayed');
  });

  it('replays events selected in the events table in one request', async () => {
    const before = receiver.requests.length;
    await page.goto(`${harness.relay.url}/console#/events?search=${TOKEN}`);
    await page.getByRole('checkbox', { name: `Select ${ids.event}` }).check();
    await button('Replay selected (1)').click();
    await page.getByText('1 events queued, 1 new deliveries.').waitFor();
    await receiver.waitForRequests(before + 1);
  });

  const TAGGING = [
    'function transform(request, context) {',
    '  console.log("tagging", request.path, context.eventId);',
    '  request.body.tag = context.env.TAG;',
    '  delete request.headers["x-drop"];',
    '  return request;',
    '}',
  ].join('\n');

  it('writes a transformation in the editor, refusing code that does not compile, and tests it on a pasted sample and on a stored event', async () => {
    await nav('Transformations').click();
    await page.getByRole('link', { name: 'New transformation' }).click();
    await field('Name').fill('Tag orders');
    await field('Code').fill('function transform( {');
    await field('Env (one NAME=value per line)').fill('TAG=console-tag-1234');
    await button('Create transformation').click();
    expect(await alertText()).to.contain('VALIDATION_ERROR').and.contain('does not compile');
    expect(await field('Code').inputValue()).to.equal('function transform( {');

    // Tab indents inside the editor instead of leaving it.
    await field('Code').fill(TAGGING);
    await field('Code').press('Control+End');
    await field('Code').press('Tab');
    expect(await field('Code').inputValue()).to.equal(`${TAGGING}  `);
    expect(await page.evaluate<string>("document.activeElement?.tagName ?? ''")).to.equal('TEXTAREA');

    // Unsaved code on a pasted sample: the env as typed, the header dropped.
    await field('Sample body (JSON or text)').fill('{"type": "order.created"}');
    await field('Sample headers (one Name: value per line)').fill('Content-Type: application/json\nX-Drop: yes');
    await field('Sample path').fill('/orders');
    await button('Run test').click();
    const result = JSON.parse((await page.getByLabel('Result').textContent()) ?? '');
    expect(result).to.deep.equal({ body: { type: 'order.created', tag: 'console-tag-1234' }, headers: { 'content-type': 'application/json' }, query: {}, path: '/orders' });
    expect(await page.getByLabel('Logs').textContent()).to.equal('tagging /orders ');

    await button('Create transformation').click();
    await page.getByRole('heading', { name: 'Tag orders', level: 1 }).waitFor();
    const id = page.url().split('/transformations/')[1];
    expect(id).to.match(/^trs_/);
    expect(await field('Env (one NAME=value per line)').inputValue(), 'env values masked as the API masks them').to.equal('TAG=****1234');

    // Saved code on a stored event picked from the recent ones: the masked env runs as the stored value.
    await field('Test on').selectOption('event');
    await page.getByRole('list', { name: 'Recent events' }).getByRole('button', { name: new RegExp(ids.event!) }).click();
    expect(await field('Event id').inputValue()).to.equal(ids.event);
    await button('Run test').click();
    await page.getByLabel('Logs').filter({ hasText: ids.event! }).waitFor();
    const transformed = JSON.parse((await page.getByLabel('Result').textContent()) ?? '');
    expect(transformed.body).to.include({ type: 'order.created', tag: 'console-tag-1234' });
    expect(transformed.body.order.note).to.equal(TOKEN);
    expect(await page.getByRole('status').filter({ hasText: 'returned a request' }).textContent()).to.match(/ran [\d.]+ ms/);
    await expectNamedControls();
    await shoot('transformation');
  });

  it('shows the error and the logs of a transformation whose code fails, in the test panel', async () => {
    await field('Code').fill('function transform() {\n  console.log("about to fail");\n  throw new TypeError("no orders today");\n}');
    await button('Run test').click();
    await page.getByRole('status').filter({ hasText: 'The transformation failed' }).waitFor();
    expect(await page.locator('.outcome .error').textContent()).to.equal('TypeError: no orders today');
    expect(await page.getByLabel('Logs').textContent()).to.equal('about to fail');
    expect(await page.getByLabel('Result').count()).to.equal(0);
    await shoot('transformation-failed');
  });

  it('sets a transformation and a delay on a route and shows both, refuses deleting the transformation in use, then clears them', async () => {
    const source = await harness.api('POST', '/api/sources', { body: { name: 'Delayed feed', slug: 'delayed-feed' } });
    const destination = await harness.api('POST', '/api/destinations', { body: { name: 'Delayed service', url: `${receiver.url}/delayed` } });
    const route = (await harness.api('POST', '/api/routes', { body: { sourceId: source.body.id, destinationId: destination.body.id } })).body;
    const label = 'Delayed feed to Delayed service';
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'Delayed feed', exact: true }) });
    const settings = page.getByRole('form', { name: `Settings of route ${label}` });
    const setRoute = async (transformation: string, delay: string) => {
      await page.getByRole('button', { name: `Edit route ${label}` }).click();
      await settings.getByLabel('Transformation', { exact: true }).selectOption({ label: transformation });
      await settings.getByLabel('Delay (seconds)', { exact: true }).fill(delay);
      await settings.getByRole('button', { name: 'Save route' }).click();
      await settings.waitFor({ state: 'detached' });
    };

    await nav('Routes').click();
    await setRoute('Tag orders', '90');
    await row.getByRole('link', { name: 'Tag orders' }).waitFor();
    expect(await row.locator('[data-column="delay"]').textContent()).to.equal('90 s');
    const saved = (await harness.api('GET', `/api/routes/${route.id}`)).body;
    expect(saved.delaySeconds).to.equal(90);
    expect((await harness.api('GET', `/api/transformations/${saved.transformationId}`)).body.name).to.equal('Tag orders');
    await expectNamedControls();
    await shoot('routes-transformed');

    await row.getByRole('link', { name: 'Tag orders' }).click();
    await page.getByRole('heading', { name: 'Tag orders', level: 1 }).waitFor();
    page.once('dialog', (dialog) => void dialog.accept());
    await button('Delete transformation').click();
    expect(await alertText()).to.contain('IN_USE').and.contain(route.id);

    await nav('Routes').click();
    await setRoute('none', '0');
    await row.locator('[data-column="transformation"]', { hasText: 'none' }).waitFor();
    expect(await row.locator('[data-column="delay"]').textContent()).to.equal('none');
    expect((await harness.api('GET', `/api/routes/${route.id}`)).body).to.include({ transformationId: null, delaySeconds: 0 });
  });

  it('shows the open circuit of a failing destination, on its page and on the overview', async () => {
    const source = await harness.api('POST', '/api/sources', { body: { name: 'Flaky feed', slug: 'flaky-feed' } });
    const destination = await harness.api('POST', '/api/destinations', {
      body: { name: 'Broken service', url: `${failing.url}/in`, retryPolicy: { maxRetries: 0 } },
    });
    await harness.api('POST', '/api/routes', { body: { sourceId: source.body.id, destinationId: destination.body.id } });
    for (let n = 0; n < 6; n += 1) {
      await fetch(`${harness.relay.url}/ingest/default/flaky-feed`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ n }) });
    }
    await waitFor('the circuit open', async () => ((await harness.api('GET', `/api/destinations/${destination.body.id}`)).body.circuitState === 'open' ? true : undefined), isDefined);

    await page.goto(`${harness.relay.url}/console#/destinations/${destination.body.id}`);
    await page.locator('[data-fact="Circuit"] dd', { hasText: 'open' }).waitFor();
    await page.getByRole('img', { name: /Events received per hour from the routed sources: 6 in the last 24 hours/ }).waitFor();
    await button('Send test').click();
    const answer = page.getByRole('status').filter({ hasText: 'status 500' });
    await answer.first().waitFor();
    expect(await answer.count()).to.equal(1);
    await expectNamedControls();
    await shoot('destination-circuit-open');

    await nav('Overview').click();
    await page.getByRole('link', { name: 'Broken service' }).waitFor();
    await shoot('overview-circuit-open');
    await nav('Destinations').click();
    await page.getByRole('link', { name: 'Broken service' }).waitFor();
    await expectNamedControls();
    await shoot('destinations');
  });

  it('previews an import with a conflicting slug, renames it, and imports', async () => {
    const file = join(shots, 'import-sources.json');
    writeFileSync(
      file,
      JSON.stringify({ version: '1.0', sources: [{ name: 'Shop orders', slug: 'shop-orders', provider: 'generic' }, { name: 'Chat', slug: 'chat-events' }] }),
    );
    await nav('Sources').click();
    await page.getByRole('button', { name: 'Copy webhook URL of Shop orders (shop-orders)' }).waitFor();
    await expectNamedControls();
    await shoot('sources');
    await page.getByRole('link', { name: 'Export and import sources' }).click();
    await field('Import file').setInputFiles(file);
    await field('Conflict strategy').selectOption('rename');
    await button('Validate').click();
    await page.getByText('2 entries: 2 to create, 0 to overwrite, 0 to skip, 0 with errors.').waitFor();
    await page.getByRole('cell', { name: 'renamed to shop-orders-1' }).waitFor();
    await expectNamedControls();
    await shoot('import-preview');
    await button('Import').click();
    await page.getByText('Imported 2, overwritten 0, skipped 0, failed 0.').waitFor();
  });

  it('edits a source\'s IP filter and dedup settings, keeping its masked secret, and shows a rotated secret once', async () => {
    const created = await harness.api('POST', '/api/sources', { body: { name: 'Billing', slug: 'billing', provider: 'payments', verificationConfig: { type: 'payments', secret: 'whsec_billing_1234' } } });
    await page.goto(`${harness.relay.url}/console#/sources/${created.body.id}`);
    await field('IP filter mode').selectOption('allowlist');
    await field('IP allowlist (one address or CIDR per line)').fill('10.0.0.0/8\nnot-an-ip');
    await field('Deduplicate').check();
    await field('Dedup strategy').selectOption('payload_hash');
    await button('Save source').click();
    expect(await alertText()).to.contain('VALIDATION_ERROR').and.contain('ipAllowlist');
    expect(await field('IP allowlist (one address or CIDR per line)').inputValue()).to.equal('10.0.0.0/8\nnot-an-ip');
    await field('IP allowlist (one address or CIDR per line)').fill('10.0.0.0/8');
    await button('Save source').click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const saved = (await harness.api('GET', `/api/sources/${created.body.id}`)).body;
    expect(saved).to.include({ ipFilterMode: 'allowlist', dedupEnabled: true, dedupStrategy: 'payload_hash' });
    expect(saved.ipAllowlist).to.deep.equal(['10.0.0.0/8']);
    expect(saved.verificationConfig.secret).to.match(/1234$/);

    await field('Grace period (seconds)').fill('600');
    await button('Rotate secret').click();
    const rotated = page.getByRole('status').filter({ hasText: 'shown this once' });
    expect(await rotated.textContent()).to.contain('Signatures made with the previous secret are accepted until');
    const shown = await rotated.locator('code').textContent();
    expect(shown).to.be.a('string').and.not.equal('whsec_billing_1234');
    expect((await harness.api('GET', `/api/sources/${created.body.id}`)).body.verificationConfig.secret).to.equal(`****${shown!.slice(-4)}`);
    await shoot('source-edited');
    await page.reload();
    await field('IP filter mode').waitFor();
    expect(await page.getByText(shown!).count()).to.equal(0);
  });

  it('rotates a destination\'s signing secret with a grace period, and says until when both secrets sign', async () => {
    await page.goto(`${harness.relay.url}/console#/destinations/${ids.destination}`);
    await field('Grace period (seconds)').fill('60');
    await button('Rotate signing secret').click();
    const rotated = page.getByRole('status').filter({ hasText: 'shown this once' });
    expect(await rotated.textContent()).to.contain('Deliveries carry signatures of this secret and of the previous one until');
    const shown = await rotated.locator('code').textContent();
    expect((await harness.api('GET', `/api/destinations/${ids.destination}/signing-secret`)).body.secret).to.equal(shown);
  });

  it('shows Replays as a disabled page while the relay has no replay API', async function () {
    const replays = await harness.api('GET', '/api/replays');
    if (replays.status !== 404) {
      console.log('      skipped: this relay serves /api/replays, so the page is live (the disabled state needs a relay without it)');
      this.skip();
    }
    await nav('Replays').click();
    await page.getByText('Replay by query is not available on this relay').waitFor();
    await shoot('replays');
  });

  it('dry-runs a replay by query, starts it and follows it to the end, on a relay with the replay API', async function () {
    if ((await harness.api('GET', '/api/replays')).status === 404) {
      console.log('      skipped: this relay has no /api/replays yet (the page is then disabled, tested above)');
      this.skip();
    }
    const before = receiver.requests.length;
    await nav('Replays').click();
    await field('Source id').fill(ids.source!);
    await button('Dry run').click();
    await page.getByText(`Matching events: 1; for example ${ids.event}.`).waitFor();
    expect(receiver.requests.length).to.equal(before);
    await button('Start replay').click();
    await page.getByRole('cell', { name: 'completed', exact: true }).waitFor();
    await receiver.waitForRequests(before + 1);
    await expectNamedControls();
    await shoot('replays');
  });

  it("counts the failing destination's open issue in the navigation, acknowledges it, and tests a new notification channel", async () => {
    const issuesLink = page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: /^Issues \d+$/ });
    await page.goto(`${harness.relay.url}/console#/issues`);
    await issuesLink.waitFor();
    await page.getByRole('cell', { name: /^http_5xx on dst_/ }).first().waitFor();
    expect(await page.getByRole('cell', { name: '500: HTTP 500', exact: false }).count()).to.be.at.least(1);
    await expectNamedControls();
    await shoot('issues');
    await page.getByRole('button', { name: /^Acknowledge iss_/ }).first().click();
    // Nothing is open any more: the list of open issues empties and the count leaves the navigation.
    await page.getByText('No open issues.').waitFor();
    await nav('Issues').waitFor();

    await nav('Notifications').click();
    await field('Channel name').fill('Console hook');
    await field('Channel URL').fill(`${receiver.url}/notify`);
    await button('Create channel').click();
    await page.getByRole('cell', { name: 'Console hook', exact: true }).waitFor();
    const before = receiver.requests.length;
    await button('Send a test to Console hook').click();
    await page.getByRole('status').filter({ hasText: 'Delivered (200)' }).waitFor();
    const sent = receiver.requests.slice(before).find((request) => request.url === '/notify');
    expect(JSON.parse(sent!.body.toString()).type).to.equal('test');
    expect(sent!.headers['webhook-signature']).to.match(/^v1,/);
    await expectNamedControls();
    await shoot('notifications');
  });

  it('shows a read key no write control, on a relay with key scopes', async function () {
    const created = await harness.api('POST', '/api/keys', { body: { name: 'console reader', scope: 'read' } });
    if (created.status === 404) {
      console.log('      skipped: this relay has no /api/keys yet, so every key may write');
      this.skip();
    }
    expect(created.status).to.equal(201);
    // Session storage belongs to one tab: a new tab starts signed out.
    const reader = await browser.context.newPage();
    try {
      await reader.goto(`${harness.relay.url}/console`);
      await reader.getByRole('textbox', { name: 'API key', exact: true }).fill(created.body.key);
      await reader.getByRole('button', { name: 'Sign in', exact: true }).click();
      // Shown once the scope probe has answered: from then on no write control may appear.
      await reader.getByRole('status').filter({ hasText: 'Read-only key' }).waitFor();
      await reader.goto(`${harness.relay.url}/console#/sources/${ids.source}`);
      await reader.getByLabel('IP filter mode', { exact: true }).waitFor();
      for (const name of ['Save source', 'Rotate secret', 'Delete source']) expect(await reader.getByRole('button', { name }).count(), name).to.equal(0);
      expect(await reader.getByLabel('Name', { exact: true }).isDisabled()).to.equal(true);
      await reader.goto(`${harness.relay.url}/console#/events/${ids.event}`);
      await reader.getByText('attempt 1 success 200').first().waitFor();
      expect(await reader.getByRole('button', { name: 'Replay', exact: true }).count()).to.equal(0);
      const transformation = (await harness.api('GET', '/api/transformations')).body.data[0];
      await reader.goto(`${harness.relay.url}/console#/transformations/${transformation.id}`);
      await reader.getByLabel('Code', { exact: true }).waitFor();
      for (const name of ['Save transformation', 'Run test', 'Delete transformation']) expect(await reader.getByRole('button', { name }).count(), name).to.equal(0);
      expect(await reader.getByLabel('Code', { exact: true }).inputValue()).to.equal(transformation.code);
      await reader.goto(`${harness.relay.url}/console#/sources`);
      await reader.getByRole('button', { name: 'Copy webhook URL of Shop orders (shop-orders)' }).waitFor();
      expect(await reader.getByRole('button', { name: 'New source' }).count()).to.equal(0);
      await reader.screenshot({ path: join(shots, 'sources-read-only.png'), fullPage: true });
    } finally {
      await reader.close();
    }
  });

  it('is usable with the keyboard: the navigation links are reached with Tab and followed with Enter', async () => {
    await page.goto(`${harness.relay.url}/console#/`);
    await nav('Overview').waitFor();
    let focused = '';
    for (let presses = 0; presses < 10 && focused !== 'Events'; presses += 1) {
      await page.keyboard.press('Tab');
      focused = await page.evaluate<string>("document.activeElement?.textContent ?? ''");
    }
    expect(focused).to.equal('Events');
    await page.keyboard.press('Enter');
    await field('Search payload').waitFor();
    expect(page.url()).to.match(/#\/events$/);
  });
});
