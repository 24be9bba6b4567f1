import type { BatchOutcome, BrokerRecord, OutgoingMessage, RecordBatch } from '../../libs/broker/broker.js';
import { deadLetterPoison, type DeadLetters } from '../../libs/pipeline/dead-letter.js';
import { firstAttemptJob, withLane } from '../../libs/pipeline/delivery-job.js';
import { firstAttemptMessage } from '../../libs/pipeline/first-attempt.js';
import { decodeIngestMessage, type IngestMeta } from '../../libs/pipeline/ingest-message.js';
import { decodedRounds } from '../../libs/pipeline/fair-rounds.js';
import { handleIsolatingPoison, isDependencyFailure, poisonReason } from '../../libs/pipeline/poison-records.js';
import type { SecretBox } from '../../libs/secrets/secret-box.js';
import type { SqlClient } from '../../libs/store/sql-client.js';
import { filterDocument } from '../../libs/filters/filter-document.js';
import { FieldBudget } from '../../libs/payload/field-budget.js';
import { openStoredPayload, sealedPayload, storedPayload, storedSealedPayload } from '../../libs/payload/stored-payload.js';
import type { RoutedTarget } from '../../libs/routing/route-targets.js';
import { planRoutes, planWithOutcomes, transformationCalls, withDocumentKept, type PlannedEvent, type RoutePlan, type TransformationRunner } from '../../libs/transformations/route-transformations.js';
import type { BudgetedCall, CallBudgets } from '../../libs/transformations/threaded-sandbox.js';
import type { TransformCall, TransformOutcome } from '../../libs/transformations/transform-sandbox.js';
import { livePayloadPolicies, storeEvents, storeFailedEvent, type NewEvent } from '../../libs/ledger/stored-events.js';
import { recordTraceparent, withTraceparent } from '../../libs/tracing/record-trace.js';
import { endFailed, traceIdOf, type RelayTracer, type Span } from '../../libs/tracing/relay-tracer.js';

/** What routing needs; the composition root wires the store, the broker and the route cache in. */
export interface RouterDeps {
  sql: SqlClient;
  routesFor(sourceId: string): Promise<RoutedTarget[]>;
  /** Publishes to one topic and resolves once the broker holds the messages durably. */
  publish(topic: string, messages: OutgoingMessage[]): Promise<void>;
  now(): number;
  /** Seals the payloads of sources with `encryptFields`, and of events whose record could not be handled. */
  secrets: SecretBox;
  deadLetters: DeadLetters;
  /**
   * Jobs of destinations without ordering go through the lanes (Kafka: a topic per destination costs the
   * deliverers a rebalance per new destination and a fetch per idle partition). Off on the embedded log,
   * whose deliverer subscribes to a new topic at once and reads idle ones for nothing.
   */
  lanes?: boolean;
  /** Runs routes' transformations (libs/transformations/route-transformations.ts); absent where no route has one (tests, benches). */
  transformations?: TransformationRunner;
  /** How long an organization's transformations may take of a batch before the rest of its records wait (createEventRouter). */
  transformationBudgetMs?: number;
  tracer: RelayTracer;
}

/** The sandbox's default time limit: an organization's share of a batch is one slowest call. */
const DEFAULT_TRANSFORMATION_BUDGET_MS = 100;

/**
 * The event of a record the router could not handle, when its metadata can be read and its source still
 * exists: stored `failed` with the reason and its body sealed whole, so the sender's `200` is not silently
 * lost and the API tells what happened. An event already stored is marked the same way.
 */
async function markFailedEvent(deps: RouterDeps, record: BrokerRecord, detail: string): Promise<void> {
  const { meta } = decodeIngestMessage(record);
  await deps.sql.transaction(async (tx) => {
    if (!(await livePayloadPolicies(tx, [meta.sourceId])).has(meta.sourceId)) return;
    // Sealed whole (or kept sealed): nothing else about the body can be trusted to work.
    const payload = meta.sealed ? { bytes: record.value, sealed: true, searchText: null } : sealedPayload(record.value, deps.secrets);
    await storeFailedEvent(tx, meta, payload, `The event could not be routed: ${detail}`, deps.now());
  });
}

/** A record's event, with the trace context its gateway span handed on. */
type IngestEvent = ReturnType<typeof decodeIngestMessage> & { traceparent: string | undefined };

function decodeIngestEvent(record: BrokerRecord): IngestEvent {
  return { ...decodeIngestMessage(record), traceparent: recordTraceparent(record) };
}

/** An event's routing worked out before its transaction: its routes, its plan and the field budget both spend. */
interface PlannedRouting {
  targets: RoutedTarget[];
  plan: RoutePlan;
  budget: FieldBudget;
  /** The time its transformations' calls took, by the sandbox's count. */
  elapsedMs: number;
}

type Decoded = (record: BrokerRecord) => IngestEvent;

/**
 * The router's handler of `relay.ingest` batches. Each batch is routed in fair rounds (fair-rounds.ts), so
 * one organization's many events do not hold up another's. Rounds count records, not time, so an
 * organization's transformations also have a time budget a batch (`transformationBudgetMs`): once its
 * plans have taken that long, the rest of its records are routed after the handler returned, as the
 * batch's completion (the offsets stay below them until then), in turns of at most that budget with the
 * event loop free between them. Another organization's records then wait for at most the budget plus one
 * call, in any batch. An organization with records still waiting has its later records wait behind them,
 * so each organization's records (and each source's) keep their order.
 */
export function createEventRouter(deps: RouterDeps): { routeBatch(batch: RecordBatch): Promise<BatchOutcome | void> } {
  const budgetMs = deps.transformationBudgetMs ?? DEFAULT_TRANSFORMATION_BUDGET_MS;
  const waiting = new Map<string, Promise<void>>();

  /** After what the organization already has waiting: a failure there fails this too, as its partition is read again. */
  function routeLater(organization: string, records: BrokerRecord[], decoded: Decoded): Promise<void> {
    const work = (waiting.get(organization) ?? Promise.resolve()).then(() => routeInTurns(deps, records, decoded, budgetMs));
    waiting.set(organization, work);
    const settle = () => {
      if (waiting.get(organization) === work) waiting.delete(organization);
    };
    work.then(settle, settle);
    return work;
  }

  return {
    async routeBatch(batch) {
      const { rounds, decoded } = decodedRounds(batch.records, decodeIngestEvent, (event) => event.meta.orgId);
      const planned = new Map<IngestEvent, PlannedRouting>();
      const spentMs = new Map<string, number>();
      const later = new Map<string, BrokerRecord[]>();
      /** Puts `record` behind its organization's deferred records, if it has any (or records still waiting) or `anyway`. */
      const deferred = (record: BrokerRecord, anyway = false): boolean => {
        const organization = organizationOf(record, decoded);
        const behind = later.get(organization) ?? (waiting.has(organization) || anyway ? [] : undefined);
        behind?.push(record);
        if (behind) later.set(organization, behind);
        return behind !== undefined;
      };
      for (const round of rounds) {
        const candidates = round.filter((record) => !deferred(record));
        const plans = await planRound(deps, candidates, decoded, (organization) => budgetMs - (spentMs.get(organization) ?? 0));
        const now: BrokerRecord[] = [];
        for (const record of candidates) {
          const routing = plans.get(record);
          if (deferred(record, routing === OVER_BUDGET)) continue;
          const organization = organizationOf(record, decoded);
          now.push(record);
          if (!routing || routing === OVER_BUDGET) continue;
          planned.set(decoded(record), routing);
          const spent = (spentMs.get(organization) ?? 0) + routing.elapsedMs;
          spentMs.set(organization, spent);
          if (spent >= budgetMs) later.set(organization, []);
        }
        await routeIsolatingPoison(deps, now, decoded, (event) => planned.get(event));
      }
      const work = [...later].filter(([, records]) => records.length > 0).map(([organization, records]) => routeLater(organization, records, decoded));
      if (work.length > 0) return { handled: batch.records.length, completion: Promise.all(work).then(() => undefined) };
    },
  };
}

/** Routes a whole batch and waits for all of it, deferred records included: for callers with no broker (fixtures, benches). */
export async function routeEvents(deps: RouterDeps, batch: RecordBatch): Promise<void> {
  const outcome = await createEventRouter(deps).routeBatch(batch);
  await outcome?.completion;
}

/** A record that cannot be decoded stands with the others that cannot (fair-rounds.ts). */
function organizationOf(record: BrokerRecord, decoded: Decoded): string {
  try {
    return decoded(record).meta.orgId;
  } catch {
    return '';
  }
}

/** The most records a turn of deferred records plans at once: each turn's plans are made up front. */
const TURN_RECORDS = 64;

/** An organization's deferred records, in turns of at most the budget each, the event loop free between turns. */
async function routeInTurns(deps: RouterDeps, records: BrokerRecord[], decoded: Decoded, budgetMs: number): Promise<void> {
  for (let next = 0; next < records.length; ) {
    await new Promise((resolve) => setImmediate(resolve));
    const plans = await planRound(deps, records.slice(next, next + TURN_RECORDS), decoded, () => budgetMs);
    const planned = new Map<IngestEvent, PlannedRouting>();
    const turn: BrokerRecord[] = [];
    for (let spent = 0; next < records.length && plans.has(records[next]!) && (turn.length === 0 || spent < budgetMs); next += 1) {
      const record = records[next]!;
      const routing = plans.get(record);
      if (routing === OVER_BUDGET && turn.length > 0) break;
      turn.push(record);
      if (!routing || routing === OVER_BUDGET) continue;
      planned.set(decoded(record), routing);
      spent += routing.elapsedMs;
    }
    await routeIsolatingPoison(deps, turn, decoded, (event) => planned.get(event));
  }
}

/** A record's routes and its transformations' calls, worked out before any of them runs. */
interface PreparedRouting {
  event: IngestEvent;
  targets: RoutedTarget[];
  planned: PlannedEvent;
  calls: TransformCall[];
}

/** A record whose transformations were not all run: its organization had spent its budget. */
const OVER_BUDGET = Symbol('over budget');

/**
 * A record's routing; undefined when it cannot be worked out (routing it again then throws inside the
 * poison isolation); or `OVER_BUDGET`.
 */
type RoundPlan = PlannedRouting | undefined | typeof OVER_BUDGET;

/**
 * The routings of `records`, all their transformations sent to the sandbox as one request: each
 * organization's calls stop once they have spent what `budgetLeft` gives it (the calls' own time).
 */
async function planRound(deps: RouterDeps, records: BrokerRecord[], decoded: Decoded, budgetLeft: (organization: string) => number): Promise<Map<BrokerRecord, RoundPlan>> {
  const prepared = new Map<BrokerRecord, PreparedRouting | undefined>();
  for (const record of records) prepared.set(record, await quietly(() => prepareRouting(deps, decoded(record))));
  const calls: BudgetedCall[] = [];
  const budgets: CallBudgets = {};
  for (const routing of prepared.values()) {
    if (!routing) continue;
    const organization = routing.event.meta.orgId;
    budgets[organization] ??= budgetLeft(organization);
    for (const call of routing.calls) calls.push({ call, budgetKey: organization });
  }
  const outcomes = calls.length === 0 ? [] : await deps.transformations!.sandbox.runAll(calls, budgets);
  const plans = new Map<BrokerRecord, RoundPlan>();
  let next = 0;
  for (const [record, routing] of prepared) {
    const own = routing ? outcomes.slice(next, (next += routing.calls.length)) : [];
    if (own.includes(null)) plans.set(record, OVER_BUDGET);
    else plans.set(record, routing && (await quietly(async () => plannedRouting(deps, routing, own as TransformOutcome[]))));
  }
  return plans;
}

/** `work`'s result, or undefined when it fails for a reason of the record's own (a dependency's failure is thrown). */
async function quietly<T>(work: () => Promise<T>): Promise<T | undefined> {
  try {
    return await work();
  } catch (error) {
    if (isDependencyFailure(error)) throw error;
    return undefined;
  }
}

async function prepareRouting(deps: RouterDeps, event: IngestEvent): Promise<PreparedRouting> {
  const targets = await deps.routesFor(event.meta.sourceId);
  const planned = withDocumentKept(routedEvent(deps, event.meta, event.body));
  return { event, targets, planned, calls: transformationCalls(targets, planned, deps.transformations) };
}

/** One budget an event for its filters, then its search text: the filters decide deliveries, so they go first. */
function plannedRouting(deps: RouterDeps, { targets, planned }: PreparedRouting, outcomes: TransformOutcome[]): PlannedRouting {
  const budget = new FieldBudget();
  const plan = planWithOutcomes(targets, planned, outcomes, deps.transformations, budget);
  return { targets, plan, budget, elapsedMs: outcomes.reduce((total, outcome) => total + outcome.durationMs, 0) };
}

async function routeIsolatingPoison(deps: RouterDeps, records: BrokerRecord[], decoded: Decoded, plannedOf: (event: IngestEvent) => PlannedRouting | undefined): Promise<void> {
  const routingOf = async (event: IngestEvent) => plannedOf(event) ?? (await planRouting(deps, event));
  await handleIsolatingPoison(records, {
    all: (batch) => routeRecords(deps, batch.map(decoded), routingOf),
    one: (record) => routeRecords(deps, [decoded(record)], routingOf),
    deadLetter: (record, error) => deadLetterPoison(deps.deadLetters, record, error),
    markEvent: (record, error) => markFailedEvent(deps, record, poisonReason(error).detail),
  });
}

/** One event's routing on its own: for a record routed again inside the poison isolation. */
async function planRouting(deps: RouterDeps, event: IngestEvent): Promise<PlannedRouting> {
  const targets = await deps.routesFor(event.meta.sourceId);
  const budget = new FieldBudget();
  // Before the transaction, which transformations would otherwise hold open for up to their time limit each.
  const plan = await planRoutes(targets, routedEvent(deps, event.meta, event.body), deps.transformations, budget);
  return { targets, plan, budget, elapsedMs: 0 };
}

/** What a route's transformation receives of an event: the document filters see, and its context. */
function routedEvent(deps: RouterDeps, meta: IngestMeta, body: Buffer): PlannedEvent {
  return {
    document: () => filterDocument({ body: openStoredPayload(body, meta.sealed === true, deps.secrets), contentType: meta.contentType, headers: meta.headers, query: meta.query, path: meta.path }),
    contentType: meta.contentType,
    context: { eventId: meta.eventId, sourceId: meta.sourceId, receivedAt: new Date(meta.receivedAt).toISOString() },
  };
}

/** One span per event, over its filters, transformations, storing and fan-out. */
async function routeRecords(deps: RouterDeps, events: IngestEvent[], routingOf: (event: IngestEvent) => Promise<PlannedRouting>): Promise<void> {
  const spans = events.map((event) => deps.tracer.start('route', event.traceparent, { attributes: { 'relay.event_id': event.meta.eventId, 'relay.source_id': event.meta.sourceId } }));
  try {
    await routeTraced(deps, events, routingOf, spans);
  } catch (error) {
    for (const span of spans) endFailed(span, error);
    throw error;
  }
  for (const span of spans) span.end();
}

async function routeTraced(deps: RouterDeps, events: IngestEvent[], routingOf: (event: IngestEvent) => Promise<PlannedRouting>, spans: Span[]): Promise<void> {
  const routings = await Promise.all(events.map(routingOf));
  const plans = routings.map((routing) => routing.plan);
  const budgets = routings.map((routing) => routing.budget);
  const targets = routings.map((routing) => routing.targets);
  const now = deps.now();
  const routed = await deps.sql.transaction(async (tx) => {
    const stored: ((typeof events)[number] & { plan: RoutePlan; span: Span })[] = [];
    const planned: NewEvent[] = [];
    const live = await livePayloadPolicies(tx, events.map((event) => event.meta.sourceId));
    for (const [index, event] of events.entries()) {
      // A source deleted after ingest took its events with it; there is nothing left to store.
      const policy = live.get(event.meta.sourceId);
      if (!policy) continue;
      const { meta, body } = event;
      const payload = meta.sealed ? storedSealedPayload(body, meta.contentType, policy, deps.secrets, budgets[index]) : storedPayload(body, meta.contentType, policy, deps.secrets, budgets[index]);
      stored.push({ ...event, plan: plans[index]!, span: spans[index]! });
      planned.push({ meta, payload, ...plans[index]!, traceId: traceIdOf(spans[index]!) ?? null });
    }
    const deliveries = await storeEvents(tx, planned, now);
    return stored.map((event, index) => ({ ...event, deliveries: deliveries[index]! }));
  });
  // A redelivered record's deliveries come from the store: a destination no longer routed, whose
  // ordering is not known here, gets its own topic.
  const ordered = new Map(targets.flat().map((target) => [target.destinationId, target.destinationOrdered]));
  const byTopic = new Map<string, OutgoingMessage[]>();
  for (const { meta, body, deliveries, plan, span } of routed) {
    span.setAttributes({ 'relay.deliveries': deliveries.length, 'relay.filtered_routes': plan.filteredRouteIds.length });
    for (const delivery of deliveries) {
      const job = firstAttemptJob({ ...meta, providerHeaders: meta.headers }, delivery);
      const target = plan.targets.find((planned) => planned.destinationId === delivery.destinationId);
      const jobPlan = target && { transformationId: target.report?.id, transformed: target.transformed, delaySeconds: target.delaySeconds };
      const { topic, message } = firstAttemptMessage(withLane(job, deps.lanes === true, ordered.get(delivery.destinationId) ?? true), body, jobPlan, deps.now(), deps.secrets);
      const messages = byTopic.get(topic);
      if (messages) messages.push(withTraceparent(message, span));
      else byTopic.set(topic, [withTraceparent(message, span)]);
    }
  }
  await Promise.all([...byTopic].map(([topic, messages]) => deps.publish(topic, messages)));
}
