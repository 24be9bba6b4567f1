import { z } from 'zod';
import type { CheckTarget } from '../delivery/allowed-target.js';
import { ValidationError } from '../errors/errors.js';
import { parseInput } from '../http/validate.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { DestinationRow } from '../store/entities/destination.js';
import { openQueueTarget, sealQueueTarget } from './queue-target-seal.js';
import { maskedCredentialsLeftOut, targetAddresses, TARGET_SCHEMAS, unmaskedTarget, type DestinationType, type QueueTarget } from './queue-target.js';

/** Where a destination delivers, as sent on create, PATCH or import. */
export interface TargetInput {
  type?: DestinationType;
  url?: string;
  target?: Record<string, unknown>;
  authType?: string;
}

/** The row's columns for it: `url` for `http`, the sealed target for a queue type. */
export type TargetColumns = Pick<DestinationRow, 'type' | 'url' | 'targetSealed'>;

const invalid = (field: string, message: string) => new ValidationError(`${field} ${message}`, [{ field, message }]);

/** The validated target: the row's columns, and the addresses the private-destination policy judges. */
export interface ResolvedTarget {
  columns: TargetColumns;
  addresses: { address: string; field: string }[];
}

/**
 * Validates what the destination delivers to, by type, with a `400 VALIDATION_ERROR` naming the field:
 * `http` takes `url` and no `target`; a queue type takes `target` (checked against its type's schema),
 * no `url`, and `authType` none (its credentials live in the target). Masked credentials sent back stand
 * for `current`'s. The addresses are judged by `checkAddresses`, which resolves names.
 */
export function resolveTarget(secrets: SecretBox, input: TargetInput, current?: DestinationRow): ResolvedTarget {
  const type = input.type ?? 'http';
  if (type === 'http') {
    if (input.target !== undefined) throw invalid('target', 'is only for the queue types; an http destination takes url');
    if (input.url === undefined) throw invalid('url', 'is required for an http destination');
    return { columns: { type, url: input.url, targetSealed: null }, addresses: [{ address: input.url, field: 'url' }] };
  }
  if (input.url !== undefined) throw invalid('url', `is not used by a ${type} destination; its target says where it publishes`);
  if (input.target === undefined) throw invalid('target', `is required for a ${type} destination`);
  if (input.authType !== undefined && input.authType !== 'none') throw invalid('authType', `must be none for a ${type} destination; its credentials live in target`);
  const sent = unmaskedTarget(type, input.target, current ? openQueueTarget(current, secrets) : null);
  // Wrapped so that the details name `target.<field>`, as for every other body field.
  const { target } = parseInput(z.strictObject({ target: TARGET_SCHEMAS[type] }), { target: sent }, `target for type ${type}`);
  const queue = { type, target } as QueueTarget;
  if (JSON.stringify(queue.target).includes('"****') || JSON.stringify(queue.target).includes('//****@')) {
    throw invalid('target', 'holds a masked credential with no stored value to stand for; send the real one');
  }
  return { columns: { type, url: '', targetSealed: sealQueueTarget(secrets, queue) }, addresses: targetAddresses(queue) };
}

/**
 * An imported entry's target input with the masked credentials that no stored value (`current`'s) stands
 * for left out, and the fields that lost them; a target it cannot read is left to `resolveTarget` to refuse.
 */
export function withoutUnknownCredentials<Input extends TargetInput>(secrets: SecretBox, input: Input, current?: DestinationRow): { input: Input; leftOut: string[] } {
  const type = input.type ?? 'http';
  if (type === 'http' || input.target === undefined) return { input, leftOut: [] };
  const sent = unmaskedTarget(type, input.target, current ? openQueueTarget(current, secrets) : null);
  const { target, leftOut } = maskedCredentialsLeftOut(type, sent);
  return { input: { ...input, target }, leftOut };
}

/** The private-destination policy and the relay's own brokers, for every address of the target. */
export async function checkAddresses(checkTarget: CheckTarget, resolved: ResolvedTarget): Promise<void> {
  for (const { address, field } of resolved.addresses) await checkTarget(address, field);
}

/** A PATCH's effective target input: what it sends, with the current type, URL or target where it sends none of them. */
export function patchedTargetInput(current: DestinationRow, secrets: SecretBox, patch: TargetInput): TargetInput | null {
  if (patch.type === undefined && patch.url === undefined && patch.target === undefined) return null;
  const type = patch.type ?? current.type;
  const same = type === current.type;
  const currentQueue = same ? openQueueTarget(current, secrets) : null;
  return {
    type,
    url: patch.url ?? (same && type === 'http' ? current.url : undefined),
    target: patch.target ?? (currentQueue ? (currentQueue.target as Record<string, unknown>) : undefined),
    authType: patch.authType ?? current.authType,
  };
}
