import type { EntitySchema } from 'typeorm';
import type { OrgScopedRepository } from '../store/org-scoped-repository.js';
import type { CheckTarget } from '../delivery/allowed-target.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { Store } from '../store/store.js';

/** The export format version (SPEC 2.8, 9). */
export const EXPORT_VERSION = '1.0';
/** What an export shows instead of a secret when secrets are not included (SPEC 2.8). */
export const REDACTED = '***REDACTED***';
/** Most entries in one import and most ids in one list (DESIGN: bulk lists hold at most 1000 ids). */
export const MAX_TRANSFER_ITEMS = 1000;

/** What export, import and bulk delete need; no announcements, so the CLI can call them without a broker. */
export interface TransferDeps {
  store: Store;
  secrets: SecretBox;
  now: () => number;
  /** Refuses private and metadata targets when an entry is checked (RELAY_BLOCK_PRIVATE_DESTINATIONS). */
  checkTarget: CheckTarget;
}

export interface TransferRow {
  id: string;
  orgId: string;
  slug: string;
  name: string;
  createdAt: number;
}

/** A row an entry would write, and what the user should know about it. */
export interface BuiltRow<Row> {
  row: Row;
  warnings: string[];
}

/** Reports long-running work (a CLI progress bar); `done` counts entries or rows of `total`. */
export type ProgressListener = (progress: { phase: 'exporting' | 'checking' | 'writing'; done: number; total: number }) => void;

/**
 * How one resource type (sources, destinations) is exported and imported. Entries are validated by the
 * resource's create rules; `Draft` is an entry that passed them.
 */
export interface TransferKind<Row extends TransferRow, Draft> {
  /** URL segment and envelope key: `sources` or `destinations`. */
  collection: 'sources' | 'destinations';
  /** `Source` or `Destination`, for messages. */
  noun: string;
  entity: EntitySchema<Row>;
  repository(store: Store): OrgScopedRepository<Row>;
  /** Fields an overwrite leaves alone: identity, and what the pipeline keeps up to date concurrently. */
  keptOnOverwrite: readonly (keyof Row)[];
  toEntry(deps: TransferDeps, row: Row, includeSensitive: boolean): Record<string, unknown>;
  /** The slug conflicts are detected by, also for an entry that fails validation; null when there is none. */
  slugOf(entry: Record<string, unknown>): string | null;
  /** Validates an entry; throws ValidationError. */
  parse(entry: Record<string, unknown>): Draft;
  /** Checks what parsing cannot: the targets a valid entry names (throws ValidationError). */
  checkTargets?(deps: TransferDeps, draft: Draft): Promise<void>;
  /** The row a valid entry creates under `slug`; throws ValidationError for a cross-field fault. */
  created(deps: TransferDeps, orgId: string, draft: Draft, slug: string): BuiltRow<Row>;
  /** The row a valid entry replaces `current` with (only the fields not kept are written). */
  overwritten(deps: TransferDeps, draft: Draft, current: Row): BuiltRow<Row>;
}
