import { expect } from 'chai';
import { loadConfig } from './config.js';
import { largestPayloadBytes, planLimits } from './plan-limits.js';

const MB = 1024 * 1024;

describe('largestPayloadBytes', function () {
  it('follows the enterprise payload limit when the operator raises it above every fixed plan', function () {
    expect(largestPayloadBytes(planLimits(loadConfig({ RELAY_ENTERPRISE_MAX_PAYLOAD_BYTES: String(60 * MB) })))).to.equal(60 * MB);
  });

  it("stays at the business plan's 10 MB when enterprise is configured below it", function () {
    expect(largestPayloadBytes(planLimits(loadConfig({ RELAY_ENTERPRISE_MAX_PAYLOAD_BYTES: '1024' })))).to.equal(10 * MB);
  });
});
