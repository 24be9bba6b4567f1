import { ConflictError, NotFoundError } from '../../../libs/errors/errors.js';
import { newId } from '../../../libs/ids/ids.js';
import type { PageQuery } from '../../../libs/store/org-scoped-repository.js';
import type { Tenant } from '../../../libs/tenancy/tenant.js';
import type { ApiDeps } from '../api-deps.js';
import { matchingBound, matchingSample } from '../../../libs/ledger/event-queries.js';
import { namedTargets, replayEvents, type ReplayDeps } from '../events/event-replay.js';
import type { ReplayEvents } from './replay-runner.js';
import { dropSnapshot } from '../../../libs/replays/replay-snapshot.js';
import type { CreateReplayInput } from './replay-schema.js';
import { cancelRunningReplay, insertReplay, replayById, replayPage, type ReplayRecord } from '../../../libs/replays/replays.js';
import { replayView } from './replay-view.js';

/** Events named in a dry run's answer. */
const SAMPLE_SIZE = 10;

export type DryRun = { matched: number; sample: string[] };

async function requireReplay(deps: Pick<ApiDeps, 'store'>, tenant: Tenant, id: string): Promise<ReplayRecord> {
  const row = await replayById(deps.store.sql, tenant.org.id, id);
  if (!row) throw new NotFoundError(`Replay ${id} not found`);
  return row;
}

/** How many events the filter matches and the newest few, by the query the job itself runs; nothing changes. */
export async function dryRunReplay(deps: ApiDeps, tenant: Tenant, input: CreateReplayInput): Promise<DryRun> {
  if (input.destinationIds) await namedTargets(deps, tenant, input.destinationIds);
  return matchingSample(deps.store.sql, tenant.org.id, input.filter, SAMPLE_SIZE);
}

/**
 * Creates the job and wakes the runner, which copies the ids of its events (a chunk at a time, so the
 * API answers at once however many match) and then replays them at `maxPerSecond`. The events are
 * fixed here: the job keeps the newest one matching now, and the copy stops there. `matched` is the
 * count now (the copy corrects it should an event go meanwhile). A job that matched nothing is completed at once.
 */
export async function createReplay(deps: ApiDeps, tenant: Tenant, input: CreateReplayInput) {
  if (input.destinationIds) await namedTargets(deps, tenant, input.destinationIds);
  const id = newId('rpl');
  const now = deps.now();
  const { matched, newest } = await matchingBound(deps.store.sql, tenant.org.id, input.filter);
  await insertReplay(deps.store.sql, {
    id,
    orgId: tenant.org.id,
    status: newest ? 'running' : 'completed',
    filter: JSON.stringify(input.filter),
    destinationIds: input.destinationIds ? JSON.stringify([...new Set(input.destinationIds)]) : null,
    maxPerSecond: input.maxPerSecond,
    matched,
    createdAt: now,
    finishedAt: newest ? null : now,
    until: newest ?? null,
  });
  deps.wakeReplays();
  return replayView(await requireReplay(deps, tenant, id));
}

export async function getReplay(deps: ApiDeps, tenant: Tenant, id: string) {
  return replayView(await requireReplay(deps, tenant, id));
}

export async function listReplays(deps: ApiDeps, tenant: Tenant, query: PageQuery) {
  const page = await replayPage(deps.store.sql, tenant.org.id, query);
  return { rows: page.rows.map(replayView), total: page.total };
}

/** Stops a running job where it is (events already replayed stay replayed); a finished one is 409 REPLAY_FINISHED. */
export async function cancelReplay(deps: ApiDeps, tenant: Tenant, id: string) {
  const current = await requireReplay(deps, tenant, id);
  if (!(await cancelRunningReplay(deps.store.sql, tenant.org.id, id, deps.now()))) {
    throw new ConflictError('REPLAY_FINISHED', `Replay ${id} is already ${current.status}`);
  }
  await dropSnapshot(deps.store.sql, id);
  return replayView(await requireReplay(deps, tenant, id));
}

/** A job's step, as the bulk replay of its organization: routes and their filters, or the named destinations. */
export function replayJobEvents(deps: ReplayDeps): ReplayEvents {
  return async (orgId, eventIds, destinationIds) => {
    const org = await deps.store.organizations.byId(orgId);
    // Deleting an organization deletes its jobs; a step already under way finds nothing to do.
    if (!org) return { eventsQueued: 0, skipped: eventIds.length };
    const result = await replayEvents(deps, { org }, eventIds, destinationIds);
    return { eventsQueued: result.eventsQueued, skipped: result.skipped.length };
  };
}
