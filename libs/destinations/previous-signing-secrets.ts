import type { SqlClient } from '../store/sql-client.js';

/**
 * Deletes the previous signing secrets whose grace ended at or before `now` (DESIGN 7 "Secret rotation
 * with overlap"): past it no delivery signs with one (build-request.ts), and a secret kept is a secret
 * that can leak. Answers how many destinations had one.
 */
export function deleteExpiredPreviousSigningSecrets(sql: SqlClient, now: number): Promise<number> {
  return sql.run('UPDATE destinations SET previous_signing_secret_sealed = NULL, previous_signing_secret_expires_at = NULL WHERE previous_signing_secret_expires_at <= ?', [now]);
}
