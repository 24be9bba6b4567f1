import { ConflictError } from '../errors/errors.js';
import { isUniqueViolation } from '../store/unique-violation.js';
import type { Tenant } from '../tenancy/tenant.js';
import { planImport, type EntryResult, type EntryStatus, type ImportPlan } from './import-plan.js';
import { parseImportRequest } from './import-request.js';
import type { ProgressListener, TransferDeps, TransferKind, TransferRow } from './transfer-kind.js';

/** Rows per INSERT statement: few round trips, and well under SQLite's limit on bound parameters. */
const INSERT_CHUNK = 100;

type Outcome = 'imported' | 'overwritten' | 'skipped' | 'failed';

const OUTCOME: Record<EntryStatus, Outcome> = {
  valid: 'imported',
  renamed: 'imported',
  overwrite: 'overwritten',
  skip: 'skipped',
  error: 'failed',
};

/** SPEC 4.5 validation response. */
export function validationResponse(results: EntryResult[]) {
  const count = (...statuses: EntryStatus[]) => results.filter((r) => statuses.includes(r.status)).length;
  const errors = count('error');
  return {
    valid: errors === 0,
    validationResults: results,
    summary: { total: results.length, toCreate: count('valid', 'renamed'), toOverwrite: count('overwrite'), toSkip: count('skip'), errors },
  };
}

/** SPEC 4.5 import response, plus `results`: per entry what happened and why (the errors of failed entries). */
export function importResponse(results: EntryResult[]) {
  const details: Record<Outcome, string[]> = { imported: [], skipped: [], overwritten: [], failed: [] };
  for (const result of results) details[OUTCOME[result.status]].push(result.name ?? `entry ${result.index}`);
  const summary = {
    imported: details.imported.length,
    skipped: details.skipped.length,
    overwritten: details.overwritten.length,
    failed: details.failed.length,
  };
  return { success: summary.failed === 0, summary, details, results };
}

/** Writes every planned row in one transaction: all of them or, when anything fails, none. */
async function writePlan<Row extends TransferRow>(
  deps: TransferDeps,
  tenant: Tenant,
  kind: TransferKind<Row, unknown>,
  plan: ImportPlan<Row>,
  onProgress?: ProgressListener,
): Promise<void> {
  const inserts = plan.writes.flatMap((write) => ('insert' in write ? [write.insert] : []));
  const updates = plan.writes.flatMap((write) => ('update' in write ? [write.update] : []));
  const total = plan.writes.length;
  try {
    await deps.store.dataSource.transaction(async (manager) => {
      const repository = manager.getRepository(kind.entity);
      let done = 0;
      for (const update of updates) {
        const result = await repository.update({ orgId: tenant.org.id, id: update.id } as never, update.changes as never);
        if (!result.affected) throw new ConflictError('IMPORT_CONFLICT', `${kind.noun} ${update.id} was deleted during the import; nothing was imported`);
        onProgress?.({ phase: 'writing', done: (done += 1), total });
      }
      for (let start = 0; start < inserts.length; start += INSERT_CHUNK) {
        const chunk = inserts.slice(start, start + INSERT_CHUNK);
        await repository.insert(chunk as never);
        onProgress?.({ phase: 'writing', done: (done += chunk.length), total });
      }
    });
  } catch (error) {
    // Planned against what existed a moment ago; a concurrent create of one of the slugs rolls it all back.
    if (isUniqueViolation(error)) {
      throw new ConflictError('DUPLICATE_SLUG', `A ${kind.noun.toLowerCase()} with one of the imported slugs was created during the import; nothing was imported`);
    }
    throw error;
  }
}

export interface ImportOptions {
  onProgress?: ProgressListener;
}

/**
 * `POST /api/<collection>/import` and `relay import`: validates the request (400 for the request as a whole),
 * plans every entry, then either answers the plan (validateOnly) or writes it in one transaction.
 */
export async function importResources<Row extends TransferRow, Draft>(
  deps: TransferDeps,
  tenant: Tenant,
  kind: TransferKind<Row, Draft>,
  body: unknown,
  options: ImportOptions = {},
) {
  const request = parseImportRequest(kind.collection, body);
  const plan = await planImport(deps, tenant, kind, request, options.onProgress);
  if (request.validateOnly) return validationResponse(plan.results);
  await writePlan(deps, tenant, kind, plan, options.onProgress);
  return importResponse(plan.results);
}
