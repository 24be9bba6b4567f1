import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

const counter = (name: string) => ({ name, type: 'integer', default: 0 });
const instant = (name: string) => ({ name, type: 'bigint', isNullable: true });
/** `lat_b0`..`lat_b22`: the latency buckets of `libs/stats/latency-buckets.ts` as of this migration. */
const LATENCY_BUCKETS = Array.from({ length: 23 }, (_, i) => `lat_b${i}`);

/**
 * Attempt statistics per destination and hour, kept by the recorder as it writes attempts: a health
 * report or a page of destinations reads a few dozen rows instead of a day of attempts.
 */
export class DestinationStats1795305600004 implements MigrationInterface {
  name = 'DestinationStats1795305600004';

  async up(runner: QueryRunner): Promise<void> {
    await runner.createTable(
      new Table({
        name: 'destination_hourly_stats',
        columns: [
          // No foreign key: like deliveries, the statistics outlive a deleted destination until retention.
          { name: 'destination_id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'hour_start', type: 'bigint', isPrimary: true },
          counter('attempts'),
          counter('ok_attempts'),
          { name: 'latency_sum_ms', type: 'bigint', default: 0 },
          counter('max_latency_ms'),
          instant('last_attempt_at'),
          instant('last_success_at'),
          instant('last_failure_at'),
          ...LATENCY_BUCKETS.map(counter),
        ],
        indices: [{ name: 'ix_destination_hourly_stats_hour', columnNames: ['hour_start'] }],
      }),
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.dropTable('destination_hourly_stats');
  }
}
