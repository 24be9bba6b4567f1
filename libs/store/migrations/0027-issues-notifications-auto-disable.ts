import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 58: `issues` (one per destination and failure kind, owned by libs/issues/issues.ts),
 * `destination_failure_streaks` (each destination's run of failures or successes, owned by
 * libs/issues/failure-streaks.ts), a destination's `auto_disable_after_seconds`, `notification_channels`
 * and `notification_outbox` (owned by libs/notifications). Plain `ALTER TABLE ... ADD COLUMN` on
 * destinations: on SQLite a TypeORM column change rebuilds the table (see 0004).
 */
export class IssuesNotificationsAutoDisable1795305600026 implements MigrationInterface {
  name = 'IssuesNotificationsAutoDisable1795305600026';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE destinations ADD COLUMN auto_disable_after_seconds integer DEFAULT 259200');
    await runner.query(
      'CREATE TABLE issues (' +
        'id varchar(40) PRIMARY KEY, ' +
        'org_id varchar(40) NOT NULL REFERENCES organizations (id) ON DELETE CASCADE, ' +
        'destination_id varchar(40) NOT NULL REFERENCES destinations (id) ON DELETE CASCADE, ' +
        'kind varchar(16) NOT NULL, ' +
        'status varchar(16) NOT NULL, ' +
        'first_seen_at bigint NOT NULL, ' +
        'last_seen_at bigint NOT NULL, ' +
        'failed_attempts integer NOT NULL, ' +
        'last_status_code integer, ' +
        'last_error text, ' +
        // JSON array of event ids, newest first.
        'sample_event_ids text NOT NULL, ' +
        'created_at bigint NOT NULL, ' +
        'updated_at bigint NOT NULL)',
    );
    await runner.query('CREATE UNIQUE INDEX ux_issues_destination_kind ON issues (destination_id, kind)');
    await runner.query('CREATE INDEX ix_issues_org_last_seen ON issues (org_id, last_seen_at, id)');
    await runner.query(
      'CREATE TABLE destination_failure_streaks (' +
        'destination_id varchar(40) PRIMARY KEY REFERENCES destinations (id) ON DELETE CASCADE, ' +
        // The first failure of the current run of failures; null while the latest attempt succeeded.
        'failing_since bigint, ' +
        'failed_attempts integer NOT NULL, ' +
        'successes integer NOT NULL, ' +
        'warned boolean NOT NULL)',
    );
    await runner.query(
      'CREATE TABLE notification_channels (' +
        'id varchar(40) PRIMARY KEY, ' +
        'org_id varchar(40) NOT NULL REFERENCES organizations (id) ON DELETE CASCADE, ' +
        'name varchar(200) NOT NULL, ' +
        'type varchar(16) NOT NULL, ' +
        // Sealed: a Slack URL is a credential.
        'url_sealed text NOT NULL, ' +
        'url_shown varchar(2048) NOT NULL, ' +
        'topics text NOT NULL, ' +
        'enabled boolean NOT NULL, ' +
        'signing_secret_sealed text, ' +
        'last_delivered_at bigint, ' +
        'last_failure_at bigint, ' +
        'last_error text, ' +
        'created_at bigint NOT NULL, ' +
        'updated_at bigint NOT NULL)',
    );
    await runner.query('CREATE INDEX ix_notification_channels_org ON notification_channels (org_id, created_at, id)');
    await runner.query(
      'CREATE TABLE notification_outbox (' +
        // One row per notification and channel it goes to; the notification's id is its webhook-id.
        'notification_id varchar(40) NOT NULL, ' +
        'channel_id varchar(40) NOT NULL REFERENCES notification_channels (id) ON DELETE CASCADE, ' +
        'topic varchar(64) NOT NULL, ' +
        // The webhook body, {type, createdAt, data}, as JSON.
        'body text NOT NULL, ' +
        'attempts integer NOT NULL, ' +
        'next_attempt_at bigint NOT NULL, ' +
        'created_at bigint NOT NULL, ' +
        'PRIMARY KEY (notification_id, channel_id))',
    );
    await runner.query('CREATE INDEX ix_notification_outbox_due ON notification_outbox (next_attempt_at)');
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('DROP TABLE notification_outbox');
    await runner.query('DROP TABLE notification_channels');
    await runner.query('DROP TABLE destination_failure_streaks');
    await runner.query('DROP TABLE issues');
    await runner.query('ALTER TABLE destinations DROP COLUMN auto_disable_after_seconds');
  }
}
