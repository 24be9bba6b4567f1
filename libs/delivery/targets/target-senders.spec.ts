import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { createClient } from 'redis';
import type { RedisTarget } from '../../destinations/queue-target.js';
import { startTcpProxy, type TcpProxy } from '../../testing/tcp-proxy.js';
import { waitFor } from '../../testing/wait-for.js';
import { createTargetCheck } from '../allowed-target.js';
import type { DeliveryTarget } from '../delivery-lookup.js';
import { createHttpSender } from '../send-request.js';
import { httpTargetSender, type TargetSender } from '../target-port.js';
import { createTargetSenders } from './target-senders.js';

/** The pool of queue connections, seen through a TCP proxy in front of the real Redis: one connection per destination while it is used. */
describe('queue target connections', function () {
  this.timeout(30_000);
  const stream = `relay-test:pool-${randomBytes(5).toString('hex')}`;
  const redis = createClient({ url: 'redis://127.0.0.1:6379' });
  let proxy: TcpProxy;
  let senders: TargetSender;

  before(async () => {
    await redis.connect();
  });
  after(async () => {
    await redis.del(stream);
    await redis.quit();
  });
  beforeEach(async () => {
    proxy = await startTcpProxy('127.0.0.1', 6379);
  });
  afterEach(async () => {
    await senders.close();
    await proxy.close();
  });

  const make = (options: { idleCloseMs?: number; blockPrivate?: boolean } = {}) =>
    createTargetSenders({
      http: httpTargetSender(createHttpSender({ blockPrivateDestinations: false })),
      checkTarget: createTargetCheck({ blockPrivateDestinations: options.blockPrivate ?? false }),
      idleCloseMs: options.idleCloseMs,
    });
  const destination = (id: string, target: Partial<RedisTarget> = {}): DeliveryTarget => ({
    id,
    orgId: 'org_test',
    enabled: true,
    destination: { authType: 'none', url: '', method: 'POST', headers: {}, signingSecret: 'whsec_x' },
    queue: { type: 'redis', target: { url: `redis://${proxy.address}`, stream, ...target } },
    timeoutMs: 5000,
    rateLimitPerMinute: null,
    retryPolicy: { maxRetries: 0, initialDelay: 1000, maxDelay: 1000, backoffMultiplier: 1 },
    ordering: 'none',
  });
  const send = (target: DeliveryTarget) =>
    senders.send({ method: 'POST', url: '', headers: { 'x-relay-event-id': 'evt_1' }, body: Buffer.from('{}') }, target, { deliveryId: 'dlv_1', attemptNumber: 1, eventId: 'evt_1', sourceId: 'src_1' });

  it('keeps one connection per destination across attempts, and closes it when the destination is forgotten', async () => {
    senders = make();
    for (let n = 0; n < 3; n += 1) expect((await send(destination('dst_a'))).ok).to.equal(true);
    expect(proxy.openConnections()).to.equal(1);
    await senders.forget('dst_a');
    await waitFor('the connection closed', () => proxy.openConnections(), (open) => open === 0);
  });

  it('connects afresh when the target changes, closing the old connection', async () => {
    senders = make();
    expect((await send(destination('dst_a'))).ok).to.equal(true);
    expect((await send(destination('dst_a', { maxLen: 1000 }))).ok).to.equal(true);
    await waitFor('one connection left', () => proxy.openConnections(), (open) => open === 1);
  });

  it('closes a connection left idle', async () => {
    senders = make({ idleCloseMs: 1000 });
    expect((await send(destination('dst_idle'))).ok).to.equal(true);
    await waitFor('the idle connection closed', () => proxy.openConnections(), (open) => open === 0, 10_000);
  });

  it('refuses a private target at connect time while private destinations are blocked, without connecting', async () => {
    senders = make({ blockPrivate: true });
    const outcome = await send(destination('dst_private'));
    expect(outcome).to.include({ ok: false, errorKind: 'refused_address' });
    expect(proxy.openConnections()).to.equal(0);
  });
});
