import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 53 (#4): `revoked_api_keys`, the SHA-256 of every revoked key, so that nothing recreates it
 * (`RELAY_API_KEY` at start). The key's row leaves `api_keys` as before: every read of keys stays as it was.
 */
export class RevokedApiKeys1795305600022 implements MigrationInterface {
  name = 'RevokedApiKeys1795305600022';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      'CREATE TABLE revoked_api_keys (' +
        'key_hash varchar(64) PRIMARY KEY, ' +
        'org_id varchar(40) NOT NULL REFERENCES organizations (id) ON DELETE CASCADE, ' +
        'key_id varchar(40) NOT NULL, ' +
        'name varchar(200) NOT NULL, ' +
        'revoked_at bigint NOT NULL)',
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('DROP TABLE revoked_api_keys');
  }
}
