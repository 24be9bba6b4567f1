import type { LookupAddress } from 'node:dns';
import { expect } from 'chai';
import { PrivateDestinationError, ValidationError } from '../errors/errors.js';
import { createTargetCheck, type TargetCheckOptions } from './allowed-target.js';
import type { ResolveHost } from './guarded-connector.js';

/** A resolver that knows only these names; any other does not resolve, as with DNS down. */
function hostsTable(table: Record<string, string[]>): ResolveHost {
  return async (hostname) => {
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

const resolveHost = hostsTable({
  'public.test': ['93.184.215.14'],
  'internal.test': ['10.0.0.7'],
  'split.test': ['93.184.215.14', '192.168.1.20'],
  'metadata.test': ['169.254.169.254'],
});

async function refusal(options: TargetCheckOptions, target: string, field = 'url'): Promise<PrivateDestinationError | undefined> {
  try {
    await createTargetCheck(options)(target, field);
    return undefined;
  } catch (error) {
    expect(error).to.be.instanceOf(PrivateDestinationError);
    return error as PrivateDestinationError;
  }
}

describe('createTargetCheck', () => {
  const strict = { blockPrivateDestinations: true, resolveHost };
  const open = { blockPrivateDestinations: false, resolveHost };

  for (const target of ['http://127.0.0.1:8080/hook', 'http://[::1]/', 'http://10.1.2.3/', 'http://internal.test/hook', 'http://split.test/', '10.0.0.1:9092', '[fd12::1]:9092']) {
    it(`refuses ${target} with 400 PRIVATE_DESTINATION naming the field and the setting`, async () => {
      const error = await refusal(strict, target, 'target.url');
      expect(error).to.include({ status: 400, code: 'PRIVATE_DESTINATION' });
      expect(error!.message).to.match(/^target\.url: /).and.include('RELAY_BLOCK_PRIVATE_DESTINATIONS');
      expect(error!.details).to.have.length(1);
      expect(error!.details![0]!.field).to.equal('target.url');
    });
  }

  it('names the host as given, never the address it resolved to', async () => {
    const error = await refusal(strict, 'https://internal.test/hook');
    expect(error!.message).to.include('internal.test').and.not.include('10.0.0.7');
  });

  it('accepts a public address, by IP or by name', async () => {
    expect(await refusal(strict, 'https://93.184.215.14/hook')).to.equal(undefined);
    expect(await refusal(strict, 'https://public.test/hook')).to.equal(undefined);
  });

  it('accepts private and loopback targets when RELAY_BLOCK_PRIVATE_DESTINATIONS is false', async () => {
    for (const target of ['http://127.0.0.1:8080/', 'http://internal.test/', '10.0.0.1:9092']) expect(await refusal(open, target), target).to.equal(undefined);
  });

  it('refuses metadata addresses even when private destinations are allowed', async () => {
    for (const target of ['http://169.254.169.254/latest/meta-data/', 'http://metadata.test/', 'http://[fd00:ec2::254]/']) {
      const error = await refusal(open, target);
      expect(error, target).to.include({ code: 'PRIVATE_DESTINATION' });
      expect(error!.message).to.include('metadata');
    }
  });

  it('accepts a name that does not resolve now: the connect-time guard judges it when it does', async () => {
    expect(await refusal(strict, 'https://unknown.test/hook')).to.equal(undefined);
  });

  it('accepts a name whose lookup gives no answer in time, as one that fails', async () => {
    const silent: ResolveHost = () => new Promise(() => {});
    expect(await refusal({ blockPrivateDestinations: true, resolveHost: silent, resolveTimeoutMs: 10 }, 'https://slow.test/hook')).to.equal(undefined);
  });

  it("refuses the relay's own Kafka brokers with 400 VALIDATION_ERROR naming the field, whatever the address policy", async () => {
    const check = createTargetCheck({ ...open, ownBrokers: ['kafka-1:9092', 'Kafka-2:9092'] });
    const error = await check('kafka-2:9092', 'target.brokers.1').then(() => undefined, (thrown: unknown) => thrown as ValidationError);
    expect(error).to.include({ status: 400, code: 'VALIDATION_ERROR' });
    expect(error!.details![0]!.field).to.equal('target.brokers.1');
    expect(await check('kafka-3:9092', 'target.brokers.0')).to.equal(undefined);
  });
});
