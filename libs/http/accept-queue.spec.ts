import { expect } from 'chai';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { acceptQueueLength } from './accept-queue.js';
import { waitFor } from '../testing/wait-for.js';

describe('acceptQueueLength', function () {
  let server: net.Server;
  let port: number;
  const clients: net.Socket[] = [];

  beforeEach(async function () {
    if (acceptQueueLength(0) === undefined) this.skip(); // no /proc/net/tcp: not Linux
    server = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterEach(async function () {
    for (const client of clients.splice(0)) client.destroy();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('counts the connections the kernel completed while the thread could not accept them, and none once it has', async function () {
    expect(acceptQueueLength(port)).to.equal(0);
    for (let index = 0; index < 5; index++) clients.push(net.connect(port, '127.0.0.1').on('error', () => {}));
    // net.connect sends its SYN from a next tick; this one runs after theirs, without a turn of the event loop.
    await new Promise((resolve) => process.nextTick(resolve));
    // The kernel completes the handshakes on its own; this thread must not turn its event loop meanwhile,
    // or the server would accept them, so it reads the table in a loop of its own.
    const deadline = Date.now() + 5_000;
    let queued = acceptQueueLength(port);
    while (queued !== 5 && Date.now() < deadline) queued = acceptQueueLength(port);
    expect(queued).to.equal(5);
    await waitFor('the server to accept every connection', () => acceptQueueLength(port), (length) => length === 0);
  });

  it('reads 0 for a port nothing listens on', function () {
    server.close();
    expect(acceptQueueLength(port)).to.equal(0);
  });
});
