import fs from 'node:fs';
import net from 'node:net';
import { expect } from 'chai';
import { unusedLoopbackPort } from './free-port.js';

describe('unusedLoopbackPort', function () {
  it('gives a port below the range the kernel hands to outgoing connections, which can then be bound', async function () {
    const range = '/proc/sys/net/ipv4/ip_local_port_range';
    if (!fs.existsSync(range)) this.skip(); // Linux only: elsewhere the range is not read.
    const low = Number(fs.readFileSync(range, 'utf8').trim().split(/\s+/)[0]);
    const port = await unusedLoopbackPort();
    expect(port).to.be.below(low);
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
    await new Promise((resolve) => server.close(resolve));
  });
});
