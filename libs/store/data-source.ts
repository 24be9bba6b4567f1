import fs from 'node:fs';
import path from 'node:path';
import { DataSource, type EntitySchema } from 'typeorm';
import { UnavailableError } from '../errors/errors.js';
import { ApiKeyEntity } from './entities/api-key.js';
import { DestinationEntity } from './entities/destination.js';
import { OrganizationEntity } from './entities/organization.js';
import { RouteEntity } from './entities/route.js';
import { SourceEntity } from './entities/source.js';
import { Foundation1795305600000 } from './migrations/0001-foundation.js';
import { Ingest1795305600001 } from './migrations/0002-ingest.js';
import { Pipeline1795305600002 } from './migrations/0003-pipeline.js';
import { EventQueries1795305600003 } from './migrations/0004-event-queries.js';
import { DestinationStats1795305600004 } from './migrations/0005-destination-stats.js';
import { DedupJournal1795305600005 } from './migrations/0006-dedup-journal.js';
import { PoisonRecords1795305600006 } from './migrations/0007-poison-records.js';
import { ApiKeyScopes1795305600008 } from './migrations/0009-api-key-scopes.js';
import { EventCounts1795305600009 } from './migrations/0010-event-counts.js';
import { RouteFiltersOrderingReplays1795305600010 } from './migrations/0011-route-filters-ordering-replays.js';
import { SearchIndexer1795305600011 } from './migrations/0012-search-indexer.js';
import { ReplaySnapshotChunks1795305600013 } from './migrations/0014-replay-snapshot-chunks.js';
import { HandedOverAttempts1795305600014 } from './migrations/0015-handed-over-attempts.js';
import { DedupClaimFunction1795305600015 } from './migrations/0016-dedup-claim-function.js';
import { DedupClaimBatchFunction1795305600016 } from './migrations/0017-dedup-claim-batch-function.js';
import { SearchIndexAutomerge1795305600017 } from './migrations/0018-search-index-automerge.js';
import { SearchIndexDetailNone1795305600018 } from './migrations/0019-search-index-detail-none.js';
import { DropHandedOverAttempts1795305600019 } from './migrations/0020-drop-handed-over-attempts.js';
import { SearchChunks1795305600020 } from './migrations/0021-search-chunks.js';
import { SqliteSearchChunks1795305600021 } from './migrations/0022-sqlite-search-chunks.js';
import { RevokedApiKeys1795305600022 } from './migrations/0023-revoked-api-keys.js';
import { SealedDestinationHeaders1795305600023 } from './migrations/0024-sealed-destination-headers.js';
import { TransformationsRouteDelay1795305600024 } from './migrations/0025-transformations-route-delay.js';
import { DestinationTypes1795305600025 } from './migrations/0026-destination-types.js';
import { IssuesNotificationsAutoDisable1795305600026 } from './migrations/0027-issues-notifications-auto-disable.js';
import { PreviousSecrets1795305600029 } from './migrations/0030-previous-secrets.js';
import { EventTraceIds1795305600031 } from './migrations/0032-event-trace-ids.js';

export interface DataSourceOptions {
  /** `postgres://...` selects PostgreSQL; otherwise SQLite in `dataDir`. */
  databaseUrl?: string;
  dataDir: string;
  /** Extra entities and migrations contributed by later layers (events, deliveries...). */
  entities?: EntitySchema<any>[];
  migrations?: (new () => import('typeorm').MigrationInterface)[];
}

export const FOUNDATION_ENTITIES = [OrganizationEntity, ApiKeyEntity, SourceEntity, DestinationEntity, RouteEntity];
export const FOUNDATION_MIGRATIONS = [
  Foundation1795305600000,
  Ingest1795305600001,
  Pipeline1795305600002,
  EventQueries1795305600003,
  DestinationStats1795305600004,
  DedupJournal1795305600005,
  PoisonRecords1795305600006,
  ApiKeyScopes1795305600008,
  EventCounts1795305600009,
  RouteFiltersOrderingReplays1795305600010,
  SearchIndexer1795305600011,
  ReplaySnapshotChunks1795305600013,
  HandedOverAttempts1795305600014,
  DedupClaimFunction1795305600015,
  DedupClaimBatchFunction1795305600016,
  SearchIndexAutomerge1795305600017,
  SearchIndexDetailNone1795305600018,
  DropHandedOverAttempts1795305600019,
  SearchChunks1795305600020,
  SqliteSearchChunks1795305600021,
  RevokedApiKeys1795305600022,
  SealedDestinationHeaders1795305600023,
  TransformationsRouteDelay1795305600024,
  DestinationTypes1795305600025,
  IssuesNotificationsAutoDisable1795305600026,
  PreviousSecrets1795305600029,
  EventTraceIds1795305600031,
];

export type DatabaseKind = 'sqlite' | 'postgres';

export function databaseKind(dataSource: DataSource): DatabaseKind {
  return dataSource.options.type === 'postgres' ? 'postgres' : 'sqlite';
}

/** Opens the database and applies pending migrations; never `synchronize`. */
export async function openDataSource(options: DataSourceOptions): Promise<DataSource> {
  const entities = [...FOUNDATION_ENTITIES, ...(options.entities ?? [])];
  const migrations = [...FOUNDATION_MIGRATIONS, ...(options.migrations ?? [])];
  let dataSource: DataSource;
  if (options.databaseUrl) {
    dataSource = new DataSource({
      type: 'postgres',
      url: options.databaseUrl,
      entities,
      migrations,
      migrationsTableName: 'relay_migrations',
      extra: { max: 20 },
    });
  } else {
    fs.mkdirSync(options.dataDir, { recursive: true });
    dataSource = new DataSource({
      type: 'better-sqlite3',
      database: path.join(options.dataDir, 'relay.sqlite'),
      entities,
      migrations,
      migrationsTableName: 'relay_migrations',
      enableWAL: true,
      prepareDatabase: (db: { pragma(sql: string): unknown }) => {
        db.pragma('busy_timeout = 5000');
        db.pragma('synchronous = NORMAL');
        db.pragma('foreign_keys = ON');
        // The SQL client's checkpointer thread copies the WAL back; a commit here must not do it on the event loop.
        db.pragma('wal_autocheckpoint = 0');
      },
    });
  }
  try {
    await dataSource.initialize();
  } catch (error) {
    throw new UnavailableError(`Cannot open the database: ${(error as Error).message}`, error);
  }
  await migrate(dataSource);
  return dataSource;
}

/** Any fixed number: the key of the PostgreSQL advisory lock that serializes migrations. */
const MIGRATION_LOCK_KEY = 7_240_311;

/**
 * Applies pending migrations. On PostgreSQL, roles starting together on one database take turns under
 * an advisory lock; the ones that come after find nothing left to do. (SQLite serializes writers itself.)
 */
async function migrate(dataSource: DataSource): Promise<void> {
  if (databaseKind(dataSource) !== 'postgres') {
    await dataSource.runMigrations({ transaction: 'each' });
    return;
  }
  const lock = dataSource.createQueryRunner();
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await dataSource.runMigrations({ transaction: 'each' });
  } finally {
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await lock.release();
  }
}
