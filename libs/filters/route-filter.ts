/**
 * Route filters (DESIGN section 6): a JSON condition matched against the document
 * `{body, headers, query, path}` of an event. A key names a field; its value is a literal (equality,
 * or membership against an array) or an object of operators and nested fields. `$and`, `$or` and
 * `$not` may appear at any level and apply to the value at that level.
 *
 * A filter is checked and compiled once into closures, so matching an event walks no JSON and
 * allocates nothing (the router runs it for every event of a filtered route). A field is a value's own
 * property only: `constructor` or `toString` name nothing that the event does not hold. Each field looked
 * up and each array item compared counts against the event's FieldBudget; past it, FieldBudgetExceededError.
 */

import type { FieldBudget } from '../payload/field-budget.js';

export const MAX_FILTER_BYTES = 10 * 1024;
export const MAX_FILTER_DEPTH = 10;

/** A fault in a filter, `path` from the filter's root (keys and array indexes). */
export interface FilterIssue {
  path: (string | number)[];
  message: string;
}

/** What a filter is matched against. */
export interface FilterDocument {
  body: unknown;
  headers: Record<string, string | string[]>;
  query: Record<string, string | string[]>;
  path: string;
}

export type CompiledFilter = (document: FilterDocument, budget: FieldBudget) => boolean;

type Matcher = (value: unknown, budget: FieldBudget) => boolean;
type Literal = string | number | boolean | null;

const COMPARISONS = new Set(['$gt', '$gte', '$lt', '$lte']);
const TEXT_OPERATORS = new Set(['$startsWith', '$endsWith', '$contains']);
const OPERATORS = new Set(['$eq', '$neq', '$in', '$nin', '$exists', '$and', '$or', '$not', ...COMPARISONS, ...TEXT_OPERATORS]);

const isLiteral = (value: unknown): value is Literal =>
  value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether an array holds `item`, each item compared counted against the budget. */
function arrayIncludes(value: unknown[], item: unknown, budget: FieldBudget): boolean {
  budget.spend(value.length);
  return value.includes(item);
}

/** Equality with a literal; a field holding an array matches when one of its items is equal. */
function equalsLiteral(expected: Literal): Matcher {
  return (value, budget) => value === expected || (Array.isArray(value) && arrayIncludes(value, expected, budget));
}

function compare(operator: string, operand: number | string): Matcher {
  const sameType = typeof operand;
  switch (operator) {
    case '$gt':
      return (value) => typeof value === sameType && (value as typeof operand) > operand;
    case '$gte':
      return (value) => typeof value === sameType && (value as typeof operand) >= operand;
    case '$lt':
      return (value) => typeof value === sameType && (value as typeof operand) < operand;
    default:
      return (value) => typeof value === sameType && (value as typeof operand) <= operand;
  }
}

function text(operator: string, operand: string): Matcher {
  switch (operator) {
    case '$startsWith':
      return (value) => typeof value === 'string' && value.startsWith(operand);
    case '$endsWith':
      return (value) => typeof value === 'string' && value.endsWith(operand);
    default:
      // A text contains a substring; an array contains an item.
      return (value, budget) => (typeof value === 'string' ? value.includes(operand) : Array.isArray(value) && arrayIncludes(value, operand, budget));
  }
}

const all = (matchers: Matcher[]): Matcher => {
  if (matchers.length === 1) return matchers[0]!;
  return (value, budget) => {
    for (const matcher of matchers) if (!matcher(value, budget)) return false;
    return true;
  };
};

const any = (matchers: Matcher[]): Matcher => (value, budget) => {
  for (const matcher of matchers) if (matcher(value, budget)) return true;
  return false;
};

/** The value of a named field, undefined when the value has no such field of its own. */
function field(name: string, matcher: Matcher): Matcher {
  return (value, budget) => {
    budget.spend(1);
    return matcher(isPlainObject(value) && Object.hasOwn(value, name) ? value[name] : undefined, budget);
  };
}

/** Checks and compiles; collects every fault rather than stopping at the first. */
class FilterCompiler {
  readonly issues: FilterIssue[] = [];

  private fault(path: (string | number)[], message: string): Matcher {
    this.issues.push({ path, message });
    return () => false;
  }

  /** A field's condition: a literal, or an object of operators and nested fields. */
  condition(spec: unknown, path: (string | number)[], depth: number): Matcher {
    if (depth > MAX_FILTER_DEPTH) return this.fault(path, `nests deeper than ${MAX_FILTER_DEPTH} levels`);
    if (isLiteral(spec)) return equalsLiteral(spec);
    if (!isPlainObject(spec)) return this.fault(path, 'must be a string, number, boolean, null or an object of conditions');
    const matchers = Object.entries(spec).map(([key, operand]) => this.entry(key, operand, [...path, key], depth));
    return matchers.length === 0 ? () => true : all(matchers);
  }

  private conditions(operand: unknown, path: (string | number)[], depth: number): Matcher[] {
    if (!Array.isArray(operand) || operand.length === 0) return [this.fault(path, 'must be a non-empty array of conditions')];
    return operand.map((item, index) => this.condition(item, [...path, index], depth + 1));
  }

  private entry(key: string, operand: unknown, path: (string | number)[], depth: number): Matcher {
    if (!key.startsWith('$')) return field(key, this.condition(operand, path, depth + 1));
    if (!OPERATORS.has(key)) return this.fault(path, `is not an operator (use one of ${[...OPERATORS].join(' ')})`);
    if (key === '$and') return all(this.conditions(operand, path, depth));
    if (key === '$or') return any(this.conditions(operand, path, depth));
    if (key === '$not') {
      const inner = this.condition(operand, path, depth + 1);
      return (value, budget) => !inner(value, budget);
    }
    if (key === '$eq' || key === '$neq') {
      if (!isLiteral(operand)) return this.fault(path, 'must be a string, number, boolean or null');
      const equal = equalsLiteral(operand);
      return key === '$eq' ? equal : (value, budget) => !equal(value, budget);
    }
    if (key === '$in' || key === '$nin') {
      if (!Array.isArray(operand) || !operand.every(isLiteral)) return this.fault(path, 'must be an array of strings, numbers, booleans or nulls');
      const member = any(operand.map(equalsLiteral));
      return key === '$in' ? member : (value, budget) => !member(value, budget);
    }
    if (key === '$exists') {
      if (typeof operand !== 'boolean') return this.fault(path, 'must be true or false');
      return operand ? (value) => value !== undefined : (value) => value === undefined;
    }
    if (COMPARISONS.has(key)) {
      if (typeof operand !== 'string' && !(typeof operand === 'number' && Number.isFinite(operand))) return this.fault(path, 'must be a number or a string');
      return compare(key, operand);
    }
    if (typeof operand !== 'string') return this.fault(path, 'must be a string');
    return text(key, operand);
  }
}

/** The faults of a filter (empty when it is valid); `null` is no filter, and valid. */
export function filterIssues(filter: unknown): FilterIssue[] {
  return checkFilter(filter).issues;
}

function checkFilter(filter: unknown): { matcher?: Matcher; issues: FilterIssue[] } {
  if (filter === null) return { issues: [] };
  if (!isPlainObject(filter)) return { issues: [{ path: [], message: 'must be an object or null' }] };
  const bytes = Buffer.byteLength(JSON.stringify(filter));
  if (bytes > MAX_FILTER_BYTES) return { issues: [{ path: [], message: `is ${bytes} bytes; at most ${MAX_FILTER_BYTES}` }] };
  const compiler = new FilterCompiler();
  const matcher = compiler.condition(filter, [], 1);
  return { matcher, issues: compiler.issues };
}

/** Compiles a filter known to be valid (stored, or checked with `filterIssues`); null matches every event. */
export function compileFilter(filter: unknown): CompiledFilter {
  const { matcher, issues } = checkFilter(filter);
  if (issues.length > 0) throw new RangeError(`Invalid filter at ${issues[0]!.path.join('.') || '(root)'}: ${issues[0]!.message}`);
  return matcher ?? (() => true);
}
