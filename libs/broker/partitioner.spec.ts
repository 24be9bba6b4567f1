import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Partitioners } from 'kafkajs';
import { murmur2, partitionFor } from './partitioner.js';

describe('partitionFor', function () {
  it('hashes like Kafka\'s Java murmur2 (vectors from Kafka\'s UtilsTest)', function () {
    const vectors: [string, number][] = [
      ['21', -973932308],
      ['foobar', -790332482],
      ['a-little-bit-long-string', -985981536],
      ['a-little-bit-longer-string', -1486304829],
      ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
      ['abc', 479470107],
    ];
    for (const [input, expected] of vectors) expect(murmur2(Buffer.from(input)), input).to.equal(expected);
  });

  it('puts every key on the partition kafkajs\' DefaultPartitioner picks', function () {
    const kafkajs = Partitioners.DefaultPartitioner();
    for (const partitions of [1, 3, 4, 12, 50]) {
      const partitionMetadata = Array.from({ length: partitions }, (_, partitionId) => ({ partitionId, leader: 0, partitionErrorCode: 0, replicas: [0], isr: [0] }));
      for (let i = 0; i < 500; i++) {
        const key = `src_${randomBytes(1 + (i % 24)).toString('base64')}${i % 7 === 0 ? 'é✓' : ''}`;
        expect(partitionFor(key, partitions), key).to.equal(kafkajs({ topic: 't', partitionMetadata, message: { key, value: null } }));
      }
    }
  });

  it('spreads keyless records over every partition in turn', function () {
    const picked = Array.from({ length: 8 }, () => partitionFor(null, 4));
    expect(new Set(picked)).to.deep.equal(new Set([0, 1, 2, 3]));
    expect(picked.slice(0, 4).map((partition, i) => picked[i + 4] === partition)).to.deep.equal([true, true, true, true]);
  });
});
