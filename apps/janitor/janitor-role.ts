import type { RoleBuilder } from '../../libs/roles/role.js';
import { createDedupLedger } from '../../libs/store/dedup-ledger.js';
import { createRateWindows } from '../../libs/store/rate-windows.js';
import { createJanitor } from './janitor.js';
import { DAY_MS } from '../../libs/ledger/retention.js';

/** Periodic housekeeping of the store (retention, expired dedup keys, old rate windows, hand-over marks and statistics). */
export const buildJanitorRole: RoleBuilder = ({ config, store, logger }) => {
  const janitor = createJanitor({
    sql: store.sql,
    dedup: createDedupLedger(store.sql),
    rateWindows: createRateWindows(store.sql),
    payloadRetentionMs: config.payloadRetentionDays * DAY_MS,
    eventRetentionMs: config.eventRetentionDays * DAY_MS,
    logger,
  });
  return { name: 'janitor', start: async () => janitor.start(), stop: () => janitor.stop() };
};
