import { expect } from 'chai';
import { ConfigError } from '../errors/errors.js';
import { loadConfig } from './config.js';

describe('loadConfig', function () {
  describe('RELAY_MAX_IN_FLIGHT_PER_SOURCE', function () {
    it('lets 64 requests of one source to one destination be in flight by default, and reads 1 to 64', function () {
      expect(loadConfig({}).maxInFlightPerSource).to.equal(64);
      expect(loadConfig({ RELAY_MAX_IN_FLIGHT_PER_SOURCE: '1' }).maxInFlightPerSource).to.equal(1);
      expect(loadConfig({ RELAY_MAX_IN_FLIGHT_PER_SOURCE: ' 64 ' }).maxInFlightPerSource).to.equal(64);
    });

    for (const bad of ['0', '65', '2.5', 'many']) {
      it(`refuses "${bad}" at start with an error naming the variable`, function () {
        expect(() => loadConfig({ RELAY_MAX_IN_FLIGHT_PER_SOURCE: bad }))
          .to.throw(ConfigError, /^RELAY_MAX_IN_FLIGHT_PER_SOURCE: /)
          .with.property('variable', 'RELAY_MAX_IN_FLIGHT_PER_SOURCE');
      });
    }
  });

  describe('RELAY_PUBLIC_URL', function () {
    it('has no default: unset, the public URL is each request\'s own origin', function () {
      expect(loadConfig({ PORT: '9090' }).publicUrl).to.equal(undefined);
    });

    it('reads an http or https URL without its trailing slashes, and refuses anything else naming the variable', function () {
      expect(loadConfig({ RELAY_PUBLIC_URL: 'https://hooks.example.com/' }).publicUrl).to.equal('https://hooks.example.com');
      expect(() => loadConfig({ RELAY_PUBLIC_URL: 'ftp://hooks.example.com' })).to.throw(ConfigError, /^RELAY_PUBLIC_URL: /);
    });
  });

  const MB = 1024 * 1024;

  describe('RELAY_ENTERPRISE_REQUESTS_PER_SECOND', function () {
    it('allows the enterprise plan 10,000 requests per second per source by default, and reads 1 to 10,000,000', function () {
      expect(loadConfig({}).enterpriseRequestsPerSecond).to.equal(10_000);
      expect(loadConfig({ RELAY_ENTERPRISE_REQUESTS_PER_SECOND: '1' }).enterpriseRequestsPerSecond).to.equal(1);
      expect(loadConfig({ RELAY_ENTERPRISE_REQUESTS_PER_SECOND: ' 10000000 ' }).enterpriseRequestsPerSecond).to.equal(10_000_000);
    });

    for (const bad of ['0', '10000001', '-5', '2.5', '1e6', 'unlimited']) {
      it(`refuses "${bad}" at start with an error naming the variable`, function () {
        expect(() => loadConfig({ RELAY_ENTERPRISE_REQUESTS_PER_SECOND: bad }))
          .to.throw(ConfigError, /^RELAY_ENTERPRISE_REQUESTS_PER_SECOND: /)
          .with.property('variable', 'RELAY_ENTERPRISE_REQUESTS_PER_SECOND');
      });
    }
  });

  describe('RELAY_ENTERPRISE_MAX_PAYLOAD_BYTES', function () {
    it('accepts enterprise payloads up to 10 MB by default, and reads 1 KB to 100 MB', function () {
      expect(loadConfig({}).enterpriseMaxPayloadBytes).to.equal(10 * MB);
      expect(loadConfig({ RELAY_ENTERPRISE_MAX_PAYLOAD_BYTES: '1024' }).enterpriseMaxPayloadBytes).to.equal(1024);
      expect(loadConfig({ RELAY_ENTERPRISE_MAX_PAYLOAD_BYTES: String(100 * MB) }).enterpriseMaxPayloadBytes).to.equal(100 * MB);
    });

    for (const bad of ['1023', String(100 * MB + 1), '0', '20MB', '1.5']) {
      it(`refuses "${bad}" at start with an error naming the variable`, function () {
        expect(() => loadConfig({ RELAY_ENTERPRISE_MAX_PAYLOAD_BYTES: bad }))
          .to.throw(ConfigError, /^RELAY_ENTERPRISE_MAX_PAYLOAD_BYTES: /)
          .with.property('variable', 'RELAY_ENTERPRISE_MAX_PAYLOAD_BYTES');
      });
    }
  });

  for (const [variable, property, max] of [
    ['RELAY_API_REQUESTS_PER_SECOND', 'apiRequestsPerSecond', 1_000_000],
    ['RELAY_MAX_ROUTES_PER_SOURCE', 'maxRoutesPerSource', 10_000],
  ] as const) {
    describe(variable, function () {
      it(`is 100 by default, and reads 1 to ${max}`, function () {
        expect(loadConfig({})[property]).to.equal(100);
        expect(loadConfig({ [variable]: '1' })[property]).to.equal(1);
        expect(loadConfig({ [variable]: String(max) })[property]).to.equal(max);
      });

      for (const bad of ['0', String(max + 1), '2.5', 'many']) {
        it(`refuses "${bad}" at start with an error naming the variable`, function () {
          expect(() => loadConfig({ [variable]: bad })).to.throw(ConfigError, new RegExp(`^${variable}: `)).with.property('variable', variable);
        });
      }
    });
  }

  describe('RELAY_BLOCK_PRIVATE_DESTINATIONS', function () {
    it('refuses private destinations by default; false allows them', function () {
      expect(loadConfig({}).blockPrivateDestinations).to.equal(true);
      expect(loadConfig({ RELAY_BLOCK_PRIVATE_DESTINATIONS: 'false' }).blockPrivateDestinations).to.equal(false);
    });
  });

  describe('METRICS_PORT and METRICS_HOST', function () {
    it('serve /metrics on 127.0.0.1:9464 by default; a port (0 for a free one) or off', function () {
      expect(loadConfig({})).to.include({ metricsPort: 9464, metricsHost: '127.0.0.1' });
      expect(loadConfig({ METRICS_PORT: '0' }).metricsPort).to.equal(0);
      expect(loadConfig({ METRICS_PORT: 'Off' }).metricsPort).to.equal('off');
      expect(loadConfig({ METRICS_HOST: '0.0.0.0' }).metricsHost).to.equal('0.0.0.0');
    });

    for (const bad of ['65536', '-1', 'none', '9464x']) {
      it(`refuses METRICS_PORT "${bad}" at start with an error naming the variable`, function () {
        expect(() => loadConfig({ METRICS_PORT: bad })).to.throw(ConfigError, /^METRICS_PORT: /);
      });
    }
  });

  describe('KAFKA_TOPIC_PREFIX', function () {
    it('prefixes nothing by default, and reads up to 64 of the characters Kafka allows in topic names', function () {
      expect(loadConfig({}).kafkaTopicPrefix).to.equal('');
      expect(loadConfig({ KAFKA_TOPIC_PREFIX: 'staging.' }).kafkaTopicPrefix).to.equal('staging.');
    });

    for (const bad of ['a/b', 'has space', 'x'.repeat(65)]) {
      it(`refuses "${bad.slice(0, 10)}" at start with an error naming the variable`, function () {
        expect(() => loadConfig({ KAFKA_TOPIC_PREFIX: bad })).to.throw(ConfigError, /^KAFKA_TOPIC_PREFIX: /);
      });
    }
  });
});
