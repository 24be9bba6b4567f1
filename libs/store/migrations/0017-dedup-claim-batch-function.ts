import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 22: on PostgreSQL, a gateway's dedup claims made together in one round trip. `relay_claim_dedup_key_batch`
 * takes the claims flattened to one row per key (`p_claims` numbers each key's claim, 1, 2, ... in
 * order) and answers one holder per claim, in order, NULL where the claim got every key: each claim is
 * `relay_claim_dedup_keys` (0016), all or nothing on its own. A batch holds the keys it took until it
 * commits, so two gateways' batches could wait on each other's keys in a cycle: first it takes a
 * transaction-level advisory lock per key, in one order every batch shares (the key's hash, in the
 * two-integer space, apart from the migrations' lock), so overlapping batches queue instead.
 */
export class DedupClaimBatchFunction1795305600016 implements MigrationInterface {
  name = 'DedupClaimBatchFunction1795305600016';

  async up(runner: QueryRunner): Promise<void> {
    if (runner.connection.options.type !== 'postgres') return;
    await runner.query(`
      CREATE FUNCTION relay_claim_dedup_key_batch(
        p_claims int[], p_sources varchar[], p_keys varchar[], p_expires bigint[], p_events varchar[], p_nows bigint[]
      ) RETURNS varchar[] LANGUAGE plpgsql AS $$
      DECLARE
        lock_key int;
        holders varchar[] := '{}';
        first int := 1;
        last int;
      BEGIN
        FOR lock_key IN
          SELECT DISTINCT hashtext(source_id || ' ' || dedup_key) FROM unnest(p_sources, p_keys) AS named(source_id, dedup_key) ORDER BY 1
        LOOP
          PERFORM pg_advisory_xact_lock(hashtext('relay_claim_dedup_key_batch'), lock_key);
        END LOOP;
        WHILE first <= cardinality(p_keys) LOOP
          last := first;
          WHILE last < cardinality(p_keys) AND p_claims[last + 1] = p_claims[first] LOOP
            last := last + 1;
          END LOOP;
          holders := array_append(holders, relay_claim_dedup_keys(p_sources[first], p_keys[first:last], p_expires[first:last], p_events[first], p_nows[first]));
          first := last + 1;
        END LOOP;
        RETURN holders;
      END $$`);
  }

  async down(runner: QueryRunner): Promise<void> {
    if (runner.connection.options.type !== 'postgres') return;
    await runner.query('DROP FUNCTION relay_claim_dedup_key_batch(int[], varchar[], varchar[], bigint[], varchar[], bigint[])');
  }
}
