import { ValidationError } from '../errors/errors.js';
import type { Tenant } from '../tenancy/tenant.js';
import { slugSchema } from '../sources/source-schema.js';
import { firstFreeSlug } from '../slugs/slugs.js';
import type { ImportRequest } from './import-request.js';
import type { BuiltRow, ProgressListener, TransferDeps, TransferKind, TransferRow } from './transfer-kind.js';

/** `valid`: created as it is; `renamed`: created under `renamedTo`; `error`: not written (counted as failed). */
export type EntryStatus = 'valid' | 'renamed' | 'overwrite' | 'skip' | 'error';

/** SPEC 4.5 validation result, plus `renamedTo` for a renamed entry. */
export interface EntryResult {
  index: number;
  name: string | null;
  slug: string | null;
  status: EntryStatus;
  errors: string[];
  warnings: string[];
  renamedTo?: string;
}

export type PlannedWrite<Row> = { insert: Row } | { update: { id: string; changes: Partial<Row> } };

/**
 * What an import does, decided before anything is written. `validateOnly` answers from it and the real import
 * writes exactly its writes, so the prediction and the outcome cannot disagree.
 */
export interface ImportPlan<Row> {
  results: EntryResult[];
  writes: PlannedWrite<Row>[];
}

interface PlannedEntry<Row> {
  result: EntryResult;
  write?: PlannedWrite<Row>;
}

function problemsOf(error: ValidationError): string[] {
  return error.details?.length ? error.details.map((d) => `${d.field}: ${d.message}`) : [error.message];
}

/** The same slug twice in one file is ambiguous (which one wins?), so the request is refused as a whole. */
function refuseRepeatedSlugs(collection: string, slugs: (string | null)[]): void {
  const firstIndex = new Map<string, number>();
  const details = [];
  for (const [index, slug] of slugs.entries()) {
    if (slug === null) continue;
    const first = firstIndex.get(slug);
    if (first === undefined) firstIndex.set(slug, index);
    else details.push({ field: `${collection}[${index}].slug`, message: `repeats "${slug}" of ${collection}[${first}]` });
  }
  if (details.length > 0) {
    throw new ValidationError(`Each slug may appear once in an import; repeated: ${details.map((d) => `${d.field} ${d.message}`).join('; ')}`, details);
  }
}

function omitKeys<Row>(row: Row, keys: readonly (keyof Row)[]): Partial<Row> {
  const changes: Partial<Row> = { ...row };
  for (const key of keys) delete changes[key];
  return changes;
}

export async function planImport<Row extends TransferRow, Draft>(
  deps: TransferDeps,
  tenant: Tenant,
  kind: TransferKind<Row, Draft>,
  request: ImportRequest,
  onProgress?: ProgressListener,
): Promise<ImportPlan<Row>> {
  const orgId = tenant.org.id;
  const slugs = request.entries.map((entry) => kind.slugOf(entry));
  refuseRepeatedSlugs(kind.collection, slugs);
  const existing = new Map((await kind.repository(deps.store).findBy(orgId)).map((row) => [row.slug, row]));
  // A renamed entry must not take a slug that exists or that another entry of the file asks for.
  const taken = new Set<string>([...existing.keys(), ...slugs.filter((slug): slug is string => slug !== null)]);

  async function planEntry(entry: Record<string, unknown>, index: number): Promise<PlannedEntry<Row>> {
    const slug = slugs[index] ?? null;
    const result: EntryResult = { index, name: typeof entry.name === 'string' ? entry.name : null, slug, status: 'error', errors: [], warnings: [] };
    const created = (built: BuiltRow<Row>, status: EntryStatus, extra: Pick<EntryResult, 'renamedTo' | 'warnings'> = { warnings: [] }) => ({
      result: { ...result, status, ...extra, warnings: [...extra.warnings, ...built.warnings] },
      write: { insert: built.row },
    });
    try {
      const draft = kind.parse(entry);
      await kind.checkTargets?.(deps, draft);
      // A valid entry always has a slug: sources require one, destinations derive one from the name.
      const current = existing.get(slug!);
      if (!current) return created(kind.created(deps, orgId, draft, slug!), 'valid');
      switch (request.conflictStrategy) {
        case 'skip':
          // Checked like every other entry, so a file is judged the same whatever already exists.
          kind.created(deps, orgId, draft, slug!);
          return { result: { ...result, status: 'skip' } };
        case 'rename': {
          const renamed = firstFreeSlug(slug!, taken);
          if (!slugSchema.safeParse(renamed).success) {
            throw new ValidationError('slug cannot be renamed', [{ field: 'slug', message: `is taken, and "${renamed}" is longer than 100 characters` }]);
          }
          taken.add(renamed);
          const warnings = [`slug "${slug}" is taken: created as "${renamed}"`];
          return created(kind.created(deps, orgId, draft, renamed), 'renamed', { renamedTo: renamed, warnings });
        }
        case 'overwrite': {
          const built = kind.overwritten(deps, draft, current);
          return {
            result: { ...result, status: 'overwrite', warnings: built.warnings },
            write: { update: { id: current.id, changes: omitKeys(built.row, kind.keptOnOverwrite) } },
          };
        }
      }
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      return { result: { ...result, errors: problemsOf(error) } };
    }
  }

  const plan: ImportPlan<Row> = { results: [], writes: [] };
  for (const [index, entry] of request.entries.entries()) {
    const planned = await planEntry(entry, index);
    plan.results.push(planned.result);
    if (planned.write) plan.writes.push(planned.write);
    onProgress?.({ phase: 'checking', done: index + 1, total: request.entries.length });
  }
  return plan;
}
