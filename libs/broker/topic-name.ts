import { BrokerRequestError } from './errors.js';

// Kafka's rule for topic names; the embedded log enforces it too so both backends accept the same names.
const LEGAL = /^[a-zA-Z0-9._-]{1,249}$/;

export function assertTopicName(name: string): void {
  if (!LEGAL.test(name) || name === '.' || name === '..') {
    throw new BrokerRequestError(`"${name}" is not a valid topic name (1-249 of a-z A-Z 0-9 . _ -)`);
  }
}
