import { expect } from 'chai';
import { kafkaClusterId } from './kafka-cluster.js';

describe('kafkaClusterId', () => {
  it('makes 16-byte base64url ids that never start with "-" or "_", which StorageTool would read as an option', () => {
    const ids = Array.from({ length: 2000 }, kafkaClusterId);
    for (const id of ids) {
      expect(id).to.match(/^[A-Za-z0-9][A-Za-z0-9_-]{21}$/);
      expect(Buffer.from(id, 'base64url')).to.have.length(16);
    }
    expect(new Set(ids).size).to.equal(ids.length);
  });
});
