/**
 * The JSONPath subset a source's `maskFields` and `encryptFields` may use, compiled once and evaluated
 * without recursion and within a budget, so no path and no body can make routing throw or run away.
 *
 * Supported: `$`, `.name`, `.*`, `['name']` / `["name"]`, `[n]` (negative counts from the end), `[*]`,
 * unions of names and indexes (`['a','b']`, `[0,2]`), and recursive descent `..name`, `..*`, `..[...]`.
 * Filters (`?(...)`), script expressions and slices are refused: they run code or cost without bound.
 * A path has at most MAX_RECURSIVE_STEPS descents and MAX_SELECTORS selectors, so what it costs on a body
 * is bounded by the body's size times a small number.
 */

import type { FieldBudget } from './field-budget.js';

/** Recursive descents (`..`) one path may have. */
export const MAX_RECURSIVE_STEPS = 2;
/** Selectors one path may have, counting each name, index and wildcard, unions' members one by one. */
export const MAX_SELECTORS = 32;

type Selector = { kind: 'name'; name: string } | { kind: 'index'; index: number } | { kind: 'wildcard' };

interface Segment {
  /** `..`: the selectors apply to the node and every node below it. */
  descendants: boolean;
  selectors: Selector[];
}

export interface FieldPath {
  text: string;
  segments: Segment[];
}

/** A path outside the supported subset; `message` says where and why. */
export class FieldPathError extends Error {
  constructor(readonly path: string, reason: string) {
    super(`${JSON.stringify(path)} is not a supported JSONPath expression: ${reason}`);
    this.name = 'FieldPathError';
  }
}

const MEMBER_NAME = /^[^.[\]\s'"()?@:]+/;
const INDEX = /^-?\d+/;

/** One bracket selector at `text[at]` (after `[` or a comma): its selector and where it ends. */
function bracketSelector(path: string, text: string, at: number): { selector: Selector; end: number } {
  const rest = text.slice(at);
  if (rest.startsWith('*')) return { selector: { kind: 'wildcard' }, end: at + 1 };
  const index = INDEX.exec(rest);
  if (index) return { selector: { kind: 'index', index: Number(index[0]) }, end: at + index[0].length };
  const quote = rest[0];
  if (quote === "'" || quote === '"') {
    let name = '';
    for (let i = 1; i < rest.length; i += 1) {
      const char = rest[i]!;
      if (char === '\\' && i + 1 < rest.length) {
        name += rest[i + 1];
        i += 1;
      } else if (char === quote) return { selector: { kind: 'name', name }, end: at + i + 1 };
      else name += char;
    }
    throw new FieldPathError(path, `unterminated quoted name at character ${at}`);
  }
  throw new FieldPathError(path, `unsupported selector at character ${at} (filters, scripts and slices are not allowed)`);
}

function bracket(path: string, text: string, at: number): { selectors: Selector[]; end: number } {
  const selectors: Selector[] = [];
  let position = at + 1;
  for (;;) {
    while (text[position] === ' ') position += 1;
    const { selector, end } = bracketSelector(path, text, position);
    selectors.push(selector);
    position = end;
    while (text[position] === ' ') position += 1;
    if (text[position] === ']') return { selectors, end: position + 1 };
    if (text[position] !== ',') throw new FieldPathError(path, `expected "," or "]" at character ${position}`);
    position += 1;
  }
}

/** Compiles a path; throws FieldPathError naming the fault. */
export function compileFieldPath(text: string): FieldPath {
  if (!text.startsWith('$')) throw new FieldPathError(text, 'must start with $');
  const segments: Segment[] = [];
  let position = 1;
  while (position < text.length) {
    let descendants = false;
    if (text.startsWith('..', position)) {
      descendants = true;
      position += 2;
    } else if (text[position] === '.') position += 1;
    else if (text[position] !== '[') throw new FieldPathError(text, `unexpected ${JSON.stringify(text[position])} at character ${position}`);
    if (text[position] === '[') {
      const { selectors, end } = bracket(text, text, position);
      segments.push({ descendants, selectors });
      position = end;
      continue;
    }
    if (text[position] === '*') {
      segments.push({ descendants, selectors: [{ kind: 'wildcard' }] });
      position += 1;
      continue;
    }
    const name = MEMBER_NAME.exec(text.slice(position));
    if (!name) throw new FieldPathError(text, `expected a member name at character ${position}`);
    segments.push({ descendants, selectors: [{ kind: 'name', name: name[0] }] });
    position += name[0].length;
  }
  checkComplexity(text, segments);
  return { text, segments };
}

function checkComplexity(text: string, segments: Segment[]): void {
  const descents = segments.filter((segment) => segment.descendants).length;
  if (descents > MAX_RECURSIVE_STEPS) throw new FieldPathError(text, `has ${descents} recursive descents (..); at most ${MAX_RECURSIVE_STEPS}`);
  const selectors = segments.reduce((sum, segment) => sum + segment.selectors.length, 0);
  if (selectors > MAX_SELECTORS) throw new FieldPathError(text, `has ${selectors} selectors; at most ${MAX_SELECTORS}`);
}

/** Where a selected value sits: its container and key; the root has none. */
export interface FieldLocation {
  parent: Record<string | number, unknown> | null;
  key: string | number | null;
  value: unknown;
}

type Container = Record<string | number, unknown>;

const isContainer = (value: unknown): value is Container => typeof value === 'object' && value !== null;

/**
 * Calls `found` with each own member `selector` picks in `container`. The members a wildcard lists are
 * paid for before they are looked at, so a wide container past the budget costs nothing more.
 */
function eachSelected(container: Container, selector: Selector, budget: FieldBudget, found: (key: string | number, value: unknown) => void): void {
  if (selector.kind === 'wildcard') {
    if (Array.isArray(container)) {
      budget.spend(container.length + 1);
      container.forEach((value, index) => found(index, value));
    } else {
      const keys = Object.keys(container);
      budget.spend(keys.length + 1);
      for (const key of keys) found(key, container[key]);
    }
    return;
  }
  budget.spend(1);
  if (Array.isArray(container)) {
    if (selector.kind !== 'index') return;
    const index = selector.index < 0 ? container.length + selector.index : selector.index;
    if (index >= 0 && index < container.length) found(index, container[index]);
    return;
  }
  const key = selector.kind === 'name' ? selector.name : String(selector.index);
  if (Object.hasOwn(container, key)) found(key, container[key]);
}

/** Every container at or below `from`, each once, without recursion. */
function containersBelow(from: Container[], budget: FieldBudget): Container[] {
  const scope: Container[] = [];
  const seen = new Set<Container>();
  const stack = [...from];
  while (stack.length > 0) {
    const container = stack.pop()!;
    if (seen.has(container)) continue;
    seen.add(container);
    scope.push(container);
    const values = Array.isArray(container) ? container : Object.values(container);
    budget.spend(values.length + 1);
    for (const value of values) if (isContainer(value)) stack.push(value);
  }
  return scope;
}

/**
 * The locations `path` selects in `root` (a node reached several ways may be listed more than once).
 * Between segments only containers are kept, each once, so a path's work grows with the body's nodes
 * times its selectors, never with the number of ways a union or a second descent reaches a node. Every
 * node looked at counts against `budget`; past it, FieldBudgetExceededError (a caller then treats the
 * body as one whose fields cannot be located).
 */
export function selectFields(root: unknown, path: FieldPath, budget: FieldBudget): FieldLocation[] {
  if (path.segments.length === 0) return [{ parent: null, key: null, value: root }];
  let containers: Container[] = isContainer(root) ? [root] : [];
  const selected: FieldLocation[] = [];
  path.segments.forEach((segment, index) => {
    const scope = segment.descendants ? containersBelow(containers, budget) : containers;
    const last = index === path.segments.length - 1;
    const next: Container[] = [];
    const seen = new Set<Container>();
    for (const container of scope) {
      for (const selector of segment.selectors) {
        eachSelected(container, selector, budget, (key, value) => {
          if (last) selected.push({ parent: container, key, value });
          else if (isContainer(value) && !seen.has(value)) {
            seen.add(value);
            next.push(value);
          }
        });
      }
    }
    containers = next;
  });
  return selected;
}
