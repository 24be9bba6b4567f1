import type { SecretBox } from '../secrets/secret-box.js';
import type { DestinationRow } from '../store/entities/destination.js';
import { TARGET_SCHEMAS, type QueueTarget, type QueueType } from './queue-target.js';

/** The row's queue target, opened and checked against its type's schema; null for an HTTP destination. */
export function openQueueTarget(row: Pick<DestinationRow, 'type' | 'targetSealed'>, secrets: SecretBox): QueueTarget | null {
  if (row.type === 'http' || row.targetSealed === null) return null;
  const type: QueueType = row.type;
  const target = TARGET_SCHEMAS[type].parse(JSON.parse(secrets.open(row.targetSealed)));
  return { type, target } as QueueTarget;
}

/** The target sealed for the row: every field, since its URL and `sasl.password` are credentials. */
export function sealQueueTarget(secrets: SecretBox, queue: QueueTarget): string {
  return secrets.seal(JSON.stringify(queue.target));
}
