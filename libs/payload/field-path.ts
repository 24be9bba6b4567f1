/**
 * The JSONPath subset a source's `maskFields` and `encryptFields` may use, compiled once and evaluated
 * without recursion and within a budget, so no path and no body can make routing throw or run away.
 *
 * Supported: `$`, `.name`, `.*`, `['name']` / `["name"]`, `[n]` (negative counts from the end), `[*]`,
 * unions of names and indexes (`['a','b']`, `[0,2]`), and recursive descent `..name`, `..*`, `..[...]`.
 * Filters (`?(...)`), script expressions and slices are refused: they run code or cost without bound.
 */

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

/** Selecting fields would visit more nodes than a routing step may spend on one body. */
export class FieldBudgetExceededError extends Error {
  constructor(budget: number) {
    super(`selecting fields visited more than ${budget} nodes`);
    this.name = 'FieldBudgetExceededError';
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
  return { text, segments };
}

/** Where a selected value sits: its container and key; the root has none. */
export interface FieldLocation {
  parent: Record<string | number, unknown> | null;
  key: string | number | null;
  value: unknown;
}

const isContainer = (value: unknown): value is Record<string | number, unknown> => typeof value === 'object' && value !== null;

function children(location: FieldLocation): FieldLocation[] {
  const { value } = location;
  if (!isContainer(value)) return [];
  if (Array.isArray(value)) return value.map((item, index) => ({ parent: value, key: index, value: item }));
  return Object.keys(value).map((key) => ({ parent: value, key, value: value[key] }));
}

function select(location: FieldLocation, selector: Selector): FieldLocation[] {
  const { value } = location;
  if (!isContainer(value)) return [];
  if (selector.kind === 'wildcard') return children(location);
  if (Array.isArray(value)) {
    if (selector.kind !== 'index') return [];
    const index = selector.index < 0 ? value.length + selector.index : selector.index;
    return index >= 0 && index < value.length ? [{ parent: value, key: index, value: value[index] }] : [];
  }
  const key = selector.kind === 'name' ? selector.name : String(selector.index);
  return Object.hasOwn(value, key) ? [{ parent: value, key, value: value[key] }] : [];
}

/**
 * The locations `path` selects in `root`. Every node looked at counts against `budget`; past it,
 * FieldBudgetExceededError (a caller then treats the body as one whose fields cannot be located).
 */
export function selectFields(root: unknown, path: FieldPath, budget: { remaining: number; limit: number }): FieldLocation[] {
  const spend = (count: number) => {
    budget.remaining -= count;
    if (budget.remaining < 0) throw new FieldBudgetExceededError(budget.limit);
  };
  let current: FieldLocation[] = [{ parent: null, key: null, value: root }];
  for (const segment of path.segments) {
    let scope = current;
    if (segment.descendants) {
      // Every node at or below the current ones, without recursion.
      scope = [];
      const stack = [...current];
      while (stack.length > 0) {
        const location = stack.pop()!;
        scope.push(location);
        const below = children(location);
        spend(below.length + 1);
        stack.push(...below);
      }
    }
    const next: FieldLocation[] = [];
    for (const location of scope) {
      for (const selector of segment.selectors) {
        const selected = select(location, selector);
        spend(selected.length + 1);
        next.push(...selected);
      }
    }
    current = next;
  }
  return current;
}
