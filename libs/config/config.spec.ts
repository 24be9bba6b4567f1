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
});
