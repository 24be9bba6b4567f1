import type { Plan } from '../config/config.js';
import type { FilterDocument } from '../filters/route-filter.js';
import type { FieldBudget } from '../payload/field-budget.js';
import { filterTakes, matchRoutes, type RoutedTarget } from '../routing/route-targets.js';
import type { TransformRequest } from './transform-request.js';
import type { Sandbox } from './threaded-sandbox.js';
import type { TransformCall, TransformContext, TransformError, TransformOutcome } from './transform-sandbox.js';

/** What a delivery shows of the transformation its request went through. */
export interface TransformationReport {
  id: string;
  error: TransformError | null;
  logs: string[];
}

/** The request a destination receives instead of the event's own. */
export interface TransformedRequest {
  body: Buffer;
  contentType: string | null;
  headers: Record<string, string>;
}

export interface PlannedTarget extends RoutedTarget {
  transformation: RoutedTarget['transformation'];
  report?: TransformationReport;
  transformed?: TransformedRequest;
}

export interface RoutePlan {
  targets: PlannedTarget[];
  /** Routes whose transformation failed: their deliveries are created `failed`, with no attempt. */
  failed: (RoutedTarget & { report: TransformationReport })[];
  filteredRouteIds: string[];
}

export interface TransformationRunner {
  sandbox: Sandbox;
  openEnv(sealed: string): Record<string, string>;
  /** The payload limit of the organization's plan. */
  maxResultBytes(plan: Plan): number;
  /** Every call, for `relay_transformation_duration_seconds` and `relay_transformation_failures_total`. */
  observe?(transformationId: string, outcome: TransformOutcome): void;
}

export interface PlannedEvent {
  /** The document filters and transformations see; asked for more than once (see `withDocumentKept`). */
  document: () => FilterDocument;
  /** The event's own content type: a string body keeps it unless the result names another. */
  contentType: string | null;
  context: Omit<TransformContext, 'destinationId' | 'env'>;
}

/** `event` with its document made once, however often it is asked for. */
export function withDocumentKept(event: PlannedEvent): PlannedEvent {
  let document: FilterDocument | undefined;
  return { ...event, document: () => (document ??= event.document()) };
}

/**
 * The sandbox calls of an event's routes that have a transformation, in route order: one each, all on
 * the same document.
 */
export function transformationCalls(targets: RoutedTarget[], event: PlannedEvent, runner: TransformationRunner | undefined): TransformCall[] {
  const transformed = targets.filter((target) => target.transformation !== null);
  if (transformed.length === 0) return [];
  if (!runner) throw new RangeError(`Route ${transformed[0]!.routeId} has a transformation, and nothing here runs transformations`);
  const request = event.document();
  return transformed.map(({ transformation, destinationId }) => ({
    code: transformation!.code,
    request,
    context: { ...event.context, destinationId, env: runner.openEnv(transformation!.sealedEnv) },
    maxResultBytes: runner.maxResultBytes(transformation!.plan),
  }));
}

/**
 * Which routes an event goes to (DESIGN 7 "Transformations"), given the outcomes of its
 * `transformationCalls` in order: a route's transformation runs first and its filter sees the result; a
 * null result counts as filtered, a failure as a failed delivery. Routes with no transformation are
 * matched as before (`matchRoutes`). Every filter spends the event's one `budget`.
 */
export function planWithOutcomes(targets: RoutedTarget[], event: PlannedEvent, outcomes: readonly TransformOutcome[], runner: TransformationRunner | undefined, budget: FieldBudget): RoutePlan {
  if (outcomes.length === 0) return { ...matchRoutes(targets, event.document, budget), failed: [] };
  const plan: RoutePlan = { targets: [], failed: [], filteredRouteIds: [] };
  let next = 0;
  for (const target of targets) {
    const transformation = target.transformation;
    if (transformation === null) {
      const matched = matchRoutes([target], event.document, budget);
      plan.targets.push(...matched.targets);
      plan.filteredRouteIds.push(...matched.filteredRouteIds);
      continue;
    }
    const outcome = outcomes[next++]!;
    runner?.observe?.(transformation.id, outcome);
    const report = { id: transformation.id, error: outcome.error, logs: outcome.logs };
    if (outcome.error) plan.failed.push({ ...target, report });
    else if (outcome.result === null || (target.filter !== null && !filterTakes(target.filter, outcome.result, budget))) plan.filteredRouteIds.push(target.routeId);
    else plan.targets.push({ ...target, report, transformed: requestToSend(outcome.result, event.contentType) });
  }
  return plan;
}

/** One event's plan, its transformations run as one request to the sandbox (replays; the router's fallback). */
export async function planRoutes(targets: RoutedTarget[], plannedEvent: PlannedEvent, runner: TransformationRunner | undefined, budget: FieldBudget): Promise<RoutePlan> {
  const event = withDocumentKept(plannedEvent);
  const calls = transformationCalls(targets, event, runner);
  const outcomes = calls.length === 0 ? [] : await runner!.sandbox.runAll(calls.map((call) => ({ call, budgetKey: '' })), {});
  return planWithOutcomes(targets, event, outcomes.map((outcome) => outcome!), runner, budget);
}

/**
 * What is sent (DESIGN 7): a string body as is, with the result's content-type or else the original's;
 * anything else as JSON. The result's headers replace the provider's; path and query are not sent.
 */
export function requestToSend(result: TransformRequest, originalContentType: string | null): TransformedRequest {
  const headers = Object.fromEntries(Object.entries(result.headers).map(([name, value]) => [name.toLowerCase(), Array.isArray(value) ? value.join(', ') : value]));
  if (typeof result.body === 'string') return { body: Buffer.from(result.body), contentType: headers['content-type'] ?? originalContentType, headers };
  return { body: Buffer.from(JSON.stringify(result.body ?? null)), contentType: 'application/json', headers };
}
