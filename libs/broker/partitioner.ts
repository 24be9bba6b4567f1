/**
 * Key -> partition, exactly as Kafka's Java default partitioner (and kafkajs' DefaultPartitioner):
 * toPositive(murmur2(utf8(key))) % partitionCount. Both adapters use it, so a key lands on the same
 * partition whichever backend runs and across restarts.
 */
const SEED = 0x9747b28c;
const M = 0x5bd1e995;

/** Kafka's murmur2 (org.apache.kafka.common.utils.Utils.murmur2), returning the same signed 32-bit int. */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  let h = SEED ^ length;
  const whole = length - (length % 4);
  for (let i = 0; i < whole; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M);
    h ^= k;
  }
  const rest = length - whole;
  if (rest === 3) h ^= data[whole + 2]! << 16;
  if (rest >= 2) h ^= data[whole + 1]! << 8;
  if (rest >= 1) {
    h ^= data[whole]!;
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

let nextRoundRobin = 0;

/** The partition for a record key; keyless records rotate over the partitions. */
export function partitionFor(key: string | null, partitionCount: number): number {
  if (key === null) {
    nextRoundRobin = (nextRoundRobin + 1) & 0x7fffffff;
    return nextRoundRobin % partitionCount;
  }
  return (murmur2(Buffer.from(key, 'utf8')) & 0x7fffffff) % partitionCount;
}
