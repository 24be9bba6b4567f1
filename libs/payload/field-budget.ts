/**
 * The work one event's fields may cost, in nodes visited: selecting its masked and encrypted fields (for
 * its search text and its views) and matching its routes' filters, together. A body of a few kilobytes
 * nested to the depth allowed, under the heaviest path a source may save, costs a few thousand; the budget
 * is what about 5 ms of one core visits (docs/decisions/0054-field-work-budget.md). It is counted, not
 * timed, so an event gets the same outcome on any machine, on every replay and in every view.
 */
export const FIELD_WORK_BUDGET = 100_000;

/** The work on one event's fields went past its budget; what was being done is then done coarsely. */
export class FieldBudgetExceededError extends Error {
  constructor(readonly limit: number) {
    super(`the work on the event's fields visited more than ${limit} nodes`);
    this.name = 'FieldBudgetExceededError';
  }
}

/** One event's budget, shared by everything that reads its fields; once spent, every further spend throws. */
export class FieldBudget {
  private spentNodes = 0;

  constructor(readonly limit: number = FIELD_WORK_BUDGET) {}

  get spent(): number {
    return this.spentNodes;
  }

  spend(nodes: number): void {
    this.spentNodes += nodes;
    if (this.spentNodes > this.limit) throw new FieldBudgetExceededError(this.limit);
  }
}
