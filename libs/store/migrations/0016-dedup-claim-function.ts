import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 22: on PostgreSQL, a dedup claim in one round trip. `relay_claim_dedup_keys` claims every key of
 * one webhook or none (the block's exception handler rolls its inserts back) and answers the event id
 * that holds a live key, or NULL when all were claimed: what BEGIN, an INSERT per key and COMMIT did in
 * three to four round trips (libs/store/dedup-ledger.ts). SQLite needs none: its claims of one turn
 * share one transaction already.
 */
export class DedupClaimFunction1795305600015 implements MigrationInterface {
  name = 'DedupClaimFunction1795305600015';

  async up(runner: QueryRunner): Promise<void> {
    if (runner.connection.options.type !== 'postgres') return;
    await runner.query(`
      CREATE FUNCTION relay_claim_dedup_keys(p_source varchar, p_keys varchar[], p_expires bigint[], p_event varchar, p_now bigint)
      RETURNS varchar LANGUAGE plpgsql AS $$
      DECLARE
        holder varchar;
      BEGIN
        FOR i IN 1 .. cardinality(p_keys) LOOP
          -- An expired key is taken over in place; a live one makes the statement touch no row.
          INSERT INTO dedup_keys (source_id, dedup_key, event_id, expires_at) VALUES (p_source, p_keys[i], p_event, p_expires[i])
            ON CONFLICT (source_id, dedup_key) DO UPDATE SET event_id = excluded.event_id, expires_at = excluded.expires_at
            WHERE dedup_keys.expires_at <= p_now;
          IF NOT FOUND THEN
            SELECT event_id INTO holder FROM dedup_keys WHERE source_id = p_source AND dedup_key = p_keys[i];
            -- Gone since (released by a failed ingest): nothing holds it, as the one-statement-per-key claim saw it.
            IF holder IS NOT NULL THEN
              RAISE EXCEPTION USING ERRCODE = 'RL409';
            END IF;
          END IF;
        END LOOP;
        RETURN NULL;
      EXCEPTION WHEN SQLSTATE 'RL409' THEN
        -- Leaving the block rolls back the keys this call took before the held one.
        RETURN holder;
      END $$`);
  }

  async down(runner: QueryRunner): Promise<void> {
    if (runner.connection.options.type !== 'postgres') return;
    await runner.query('DROP FUNCTION relay_claim_dedup_keys(varchar, varchar[], bigint[], varchar, bigint)');
  }
}
