import { expect } from 'chai';
import fs from 'node:fs';
import { Worker } from 'node:worker_threads';
import Koa from 'koa';
import { startHttpServer, type RunningServer } from './http-server.js';

/** More connections at once than Node's default listen backlog (511) lets the kernel queue. */
const BURST = 800;

// A worker thread connects while the server's thread is busy: the kernel completes each handshake only if
// the connection fits in the listen queue, and drops the SYN of one that does not (retried 1 s later).
const CONNECT_BURST = `
const net = require('node:net');
const { parentPort, workerData } = require('node:worker_threads');
const started = performance.now();
const times = [];
const sockets = [];
for (let i = 0; i < workerData.count; i++) {
  const socket = net.connect(workerData.port, '127.0.0.1');
  socket.on('connect', () => {
    times.push(performance.now() - started);
    if (times.length === workerData.count) {
      parentPort.postMessage(times);
      for (const s of sockets) s.destroy();
    }
  });
  socket.on('error', () => undefined);
  sockets.push(socket);
}
`;

describe('startHttpServer', () => {
  let server: RunningServer;

  afterEach(() => server?.close());

  it('queues a burst of new connections beyond 511 while its thread is busy, so none waits for a SYN to be sent again', async function () {
    const somaxconn = Number(fs.readFileSync('/proc/sys/net/core/somaxconn', 'utf8'));
    if (somaxconn < BURST) {
      console.log(`      skipped: the kernel caps every listen queue at net.core.somaxconn, ${somaxconn} here`);
      this.skip();
    }
    server = await startHttpServer(new Koa(), { port: 0, host: '127.0.0.1' });
    const connector = new Worker(CONNECT_BURST, { eval: true, workerData: { port: server.port, count: BURST } });
    const connected = new Promise<number[]>((resolve) => connector.once('message', resolve));
    // This thread accepts nothing meanwhile: the burst waits in the kernel's listen queue.
    const busyUntil = Date.now() + 1_500;
    while (Date.now() < busyUntil);
    const times = await connected;
    await connector.terminate();
    // A dropped SYN is sent again after 1 s: every connection here completed well before that.
    expect(Math.max(...times)).to.be.below(1_000);
  });
});
