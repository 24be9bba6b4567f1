import { z } from 'zod';
import { parseInput } from '../http/validate.js';
import { EXPORT_VERSION, MAX_TRANSFER_ITEMS } from './transfer-kind.js';

export const CONFLICT_STRATEGIES = ['skip', 'rename', 'overwrite'] as const;
export type ConflictStrategy = (typeof CONFLICT_STRATEGIES)[number];

export interface ImportRequest {
  /** Each is a JSON object; its fields are checked entry by entry, later. */
  entries: Record<string, unknown>[];
  conflictStrategy: ConflictStrategy;
  validateOnly: boolean;
}

/** What is shared by both bodies; a whole export envelope is accepted as it is (its version must be 1.0). */
const requestShape = {
  conflictStrategy: z.enum(CONFLICT_STRATEGIES, { error: `must be one of ${CONFLICT_STRATEGIES.join(', ')}` }),
  validateOnly: z.boolean().default(false),
  version: z.literal(EXPORT_VERSION, { error: `must be "${EXPORT_VERSION}", the only export format version` }).optional(),
  exportedAt: z.string().optional(),
  organizationSlug: z.string().optional(),
};

const entriesSchema = z
  .array(z.record(z.string(), z.unknown(), { error: 'must be an object' }), { error: 'must be an array of entries' })
  .max(MAX_TRANSFER_ITEMS, `must hold at most ${MAX_TRANSFER_ITEMS} entries`);

/** The import request of one collection: `{sources|destinations, conflictStrategy, validateOnly?}`. */
export function importRequestSchema(collection: 'sources' | 'destinations') {
  return z.strictObject({ ...requestShape, [collection]: entriesSchema });
}

/**
 * Checks the request as a whole: a fault here (a wrong version, no strategy, an entry that is not even an
 * object, too many entries) is 400 for the request. Faults inside an entry are reported per entry instead.
 */
export function parseImportRequest(collection: 'sources' | 'destinations', body: unknown): ImportRequest {
  const parsed = parseInput(importRequestSchema(collection), body, 'Import request') as Record<string, unknown> & Omit<ImportRequest, 'entries'>;
  return {
    entries: parsed[collection] as Record<string, unknown>[],
    conflictStrategy: parsed.conflictStrategy,
    validateOnly: parsed.validateOnly,
  };
}
