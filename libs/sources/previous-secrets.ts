import type { SqlClient } from '../store/sql-client.js';

/**
 * Deletes the previous verification secrets whose grace ended at or before `now` (DESIGN 7 "Secret
 * rotation with overlap"): past it nothing verifies with one (verify-signature.ts), and a secret kept is a
 * secret that can leak. Answers how many sources had one.
 */
export function deleteExpiredPreviousSecrets(sql: SqlClient, now: number): Promise<number> {
  return sql.run('UPDATE sources SET previous_secret_sealed = NULL, previous_secret_expires_at = NULL WHERE previous_secret_expires_at <= ?', [now]);
}
