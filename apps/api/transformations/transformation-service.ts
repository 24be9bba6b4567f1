import { NotFoundError, ValidationError } from '../../../libs/errors/errors.js';
import { newId } from '../../../libs/ids/ids.js';
import { maskSecret } from '../../../libs/secrets/mask-secret.js';
import type { PageQuery } from '../../../libs/store/org-scoped-repository.js';
import { isUniqueViolation } from '../../../libs/store/unique-violation.js';
import type { Tenant } from '../../../libs/tenancy/tenant.js';
import { isoTime } from '../../../libs/time/iso-time.js';
import type { TransformRequest } from '../../../libs/transformations/transform-request.js';
import {
  deleteTransformation as deleteRow,
  getTransformation as getRow,
  insertTransformation,
  listTransformations as listRows,
  transformationNameTaken,
  updateTransformation as updateRow,
  type TransformationRow,
} from '../../../libs/transformations/transformations.js';
import type { ApiDeps } from '../api-deps.js';
import { requireEvent, shownBody, storedBody, storedEventDocument, payloadExpired } from '../events/event-service.js';

export interface TransformationInput {
  name: string;
  code: string;
  env?: Record<string, string>;
}

type TransformationDeps = Pick<ApiDeps, 'store' | 'secrets' | 'payloadViews' | 'now' | 'announce' | 'transformations'>;

function envOf(deps: Pick<ApiDeps, 'secrets'>, row: TransformationRow): Record<string, string> {
  return JSON.parse(deps.secrets.open(row.sealedEnv)) as Record<string, string>;
}

function transformationView(deps: Pick<ApiDeps, 'secrets'>, row: TransformationRow) {
  const env = Object.fromEntries(Object.entries(envOf(deps, row)).map(([key, value]) => [key, maskSecret(value)]));
  return { id: row.id, name: row.name, code: row.code, env, createdAt: isoTime(row.createdAt), updatedAt: isoTime(row.updatedAt) };
}

/** Saving code that does not compile or defines no `transform` is refused. */
async function assertCompiles(deps: TransformationDeps, code: string): Promise<void> {
  const error = await deps.transformations.sandbox.check(code);
  if (error) throw new ValidationError(`The code does not compile: ${error.name}: ${error.message}`, [{ field: 'code', message: `${error.name}: ${error.message}` }]);
}

async function requireTransformation(deps: Pick<ApiDeps, 'store'>, tenant: Tenant, id: string): Promise<TransformationRow> {
  const row = await getRow(deps.store.sql, tenant.org.id, id);
  if (!row) throw new NotFoundError(`Transformation ${id} not found`);
  return row;
}

/** A masked value sent back (as a fetched transformation shows it) keeps the stored one; no env at all keeps them all. */
function withStoredEnv(storedEnv: Record<string, string>, env: Record<string, string> | undefined): Record<string, string> {
  if (env === undefined) return storedEnv;
  return Object.fromEntries(Object.entries(env).map(([key, value]) => [key, storedEnv[key] !== undefined && value === maskSecret(storedEnv[key]) ? storedEnv[key] : value]));
}

async function saved<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error)) throw transformationNameTaken();
    throw error;
  }
}

export async function createTransformation(deps: TransformationDeps, tenant: Tenant, input: TransformationInput) {
  await assertCompiles(deps, input.code);
  const now = deps.now();
  const row: TransformationRow = { id: newId('trs'), orgId: tenant.org.id, name: input.name, code: input.code, sealedEnv: deps.secrets.seal(JSON.stringify(input.env ?? {})), createdAt: now, updatedAt: now };
  await saved(() => insertTransformation(deps.store.sql, row));
  return transformationView(deps, row);
}

export async function getTransformation(deps: TransformationDeps, tenant: Tenant, id: string) {
  return transformationView(deps, await requireTransformation(deps, tenant, id));
}

export async function listTransformations(deps: TransformationDeps, tenant: Tenant, query: PageQuery) {
  const page = await listRows(deps.store.sql, tenant.org.id, query);
  return { rows: page.rows.map((row) => transformationView(deps, row)), total: page.total };
}

export async function updateTransformation(deps: TransformationDeps, tenant: Tenant, id: string, patch: Partial<TransformationInput>) {
  const current = await requireTransformation(deps, tenant, id);
  if (patch.code !== undefined) await assertCompiles(deps, patch.code);
  const env = withStoredEnv(envOf(deps, current), patch.env);
  const row: TransformationRow = { ...current, name: patch.name ?? current.name, code: patch.code ?? current.code, sealedEnv: deps.secrets.seal(JSON.stringify(env)), updatedAt: deps.now() };
  await saved(() => updateRow(deps.store.sql, row));
  await deps.announce({ kind: 'transformation', action: 'updated', orgId: tenant.org.id, id });
  return transformationView(deps, row);
}

export async function deleteTransformation(deps: TransformationDeps, tenant: Tenant, id: string): Promise<void> {
  if (!(await deleteRow(deps.store.sql, tenant.org.id, id))) throw new NotFoundError(`Transformation ${id} not found`);
  await deps.announce({ kind: 'transformation', action: 'deleted', orgId: tenant.org.id, id });
}

export interface TransformationTestInput {
  code: string;
  eventId?: string;
  sample?: TransformRequest;
  env?: Record<string, string>;
  /** A stored transformation whose env fills in the masked values of `env` (the console tests saved code this way). */
  transformationId?: string;
}

/** Runs code on a stored event or a sample, as a delivery would; a failure is an answer, not an error. */
export async function testTransformation(deps: TransformationDeps, tenant: Tenant, input: TransformationTestInput) {
  const { request, eventId, sourceId, receivedAt } = await testRequest(deps, tenant, input);
  const env = input.transformationId === undefined ? (input.env ?? {}) : withStoredEnv(envOf(deps, await requireTransformation(deps, tenant, input.transformationId)), input.env);
  const outcome = await deps.transformations.sandbox.run({
    code: input.code,
    request,
    context: { eventId, sourceId, destinationId: '', receivedAt, env },
    maxResultBytes: deps.transformations.maxResultBytes(tenant.org.plan),
  });
  return { result: outcome.result, logs: outcome.logs, error: outcome.error, durationMs: Math.round(outcome.durationMs * 1000) / 1000 };
}

async function testRequest(deps: TransformationDeps, tenant: Tenant, input: TransformationTestInput) {
  if (input.sample) return { request: input.sample, eventId: '', sourceId: '', receivedAt: new Date(deps.now()).toISOString() };
  const event = await requireEvent(deps, tenant, input.eventId!);
  const stored = await storedBody(deps, event);
  if (!stored) throw payloadExpired(event.id);
  // The test answers with what the code saw: a masked field stays masked, as in every view of the event.
  const document = storedEventDocument(event, await shownBody(deps, event, stored));
  return { request: { body: document.body, headers: document.headers, query: document.query, path: document.path ?? '' }, eventId: event.id, sourceId: event.sourceId, receivedAt: new Date(event.receivedAt).toISOString() };
}
