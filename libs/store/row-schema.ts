import type { z } from 'zod';
import { RelayError } from '../errors/errors.js';

/**
 * A row read back that its table's schema does not describe: the store holds what no version of the
 * code wrote (a hand edit, a half-applied migration). Retrying reads the same row, so it is not retriable.
 */
export class MalformedRowError extends RelayError {
  constructor(table: string, reason: string) {
    super(500, 'INTERNAL_ERROR', `a row of ${table} is malformed: ${reason}`);
  }
}

/** Rows read back pass their table's schema, as broker messages pass theirs. */
export function decodeRows<S extends z.ZodType>(schema: S, table: string, rows: unknown[]): z.infer<S>[] {
  return rows.map((row) => {
    const decoded = schema.safeParse(row);
    if (!decoded.success) throw new MalformedRowError(table, decoded.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; '));
    return decoded.data;
  });
}
