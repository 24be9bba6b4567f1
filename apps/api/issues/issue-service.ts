import { NotFoundError } from '../../../libs/errors/errors.js';
import type { IssueStatus } from '../../../libs/issues/issue-kinds.js';
import { issueView, listIssues as selectIssuePage, selectIssue, setIssueStatus, type IssueFilter } from '../../../libs/issues/issues.js';
import { enqueueNotification } from '../../../libs/notifications/outbox.js';
import type { PageQuery } from '../../../libs/store/org-scoped-repository.js';
import type { Tenant } from '../../../libs/tenancy/tenant.js';
import type { ApiDeps } from '../api-deps.js';
import { createReplay } from '../replays/replay-service.js';

async function requireIssue(deps: Pick<ApiDeps, 'store'>, tenant: Tenant, id: string) {
  const issue = await selectIssue(deps.store.sql, tenant.org.id, id);
  if (!issue) throw new NotFoundError(`Issue ${id} not found`);
  return issue;
}

export async function listIssues(deps: ApiDeps, tenant: Tenant, query: PageQuery & IssueFilter) {
  const page = await selectIssuePage(deps.store.sql, tenant.org.id, { status: query.status, destinationId: query.destinationId, kind: query.kind }, query);
  return { rows: page.rows.map(issueView), total: page.total };
}

export async function getIssue(deps: ApiDeps, tenant: Tenant, id: string) {
  return issueView(await requireIssue(deps, tenant, id));
}

/** Acknowledge, resolve, ignore or reopen by hand; resolving one that was not resolved notifies `issue.resolved`. */
export async function updateIssue(deps: ApiDeps, tenant: Tenant, id: string, status: IssueStatus) {
  const now = deps.now();
  await deps.store.sql.transaction(async (tx) => {
    const before = await setIssueStatus(tx, tenant.org.id, id, status, now);
    if (!before) throw new NotFoundError(`Issue ${id} not found`);
    if (status === 'resolved' && before.status !== 'resolved') {
      await enqueueNotification(tx, { orgId: tenant.org.id, topic: 'issue.resolved', data: issueView({ ...before, status, updatedAt: now }), at: now });
    }
  });
  return getIssue(deps, tenant, id);
}

/** A paced replay job of the issue's failed deliveries since it was first seen, each to the issue's destination. */
export async function replayIssue(deps: ApiDeps, tenant: Tenant, id: string, maxPerSecond: number) {
  const issue = await requireIssue(deps, tenant, id);
  return createReplay(deps, tenant, { filter: { issueId: issue.id }, destinationIds: [issue.destinationId], maxPerSecond });
}
