/**
 * Checks of the house rules that read source text (apps/tree-boundaries.spec.ts).
 *
 * Functions longer than a reader takes in at once are found without a TypeScript parser (the compiler here
 * is the native one, which has no JavaScript API): strings, templates, comments and regular expressions
 * are blanked, then each `{` that opens a function body (after `=>`, or after a parameter list that no
 * `if`, `for`, `while`, `switch` or `catch` owns) is matched to its `}`.
 */
export interface LongFunction {
  line: number;
  lines: number;
}

const CONTROL_WORDS = new Set(['if', 'for', 'while', 'switch', 'catch', 'with']);

/** The source with every string, template text, comment and regex literal replaced by spaces (newlines kept). */
export function codeOnly(source: string): string {
  const out = source.split('');
  const blank = (from: number, to: number) => {
    for (let i = from; i < to; i++) if (out[i] !== '\n') out[i] = ' ';
  };
  const templateDepths: number[] = [];
  let depth = 0;
  let i = 0;
  let lastSignificant = '';
  while (i < source.length) {
    const c = source[i]!;
    const next = source[i + 1];
    if (c === '/' && next === '/') {
      const end = source.indexOf('\n', i);
      const to = end === -1 ? source.length : end;
      blank(i, to);
      i = to;
      continue;
    }
    if (c === '/' && next === '*') {
      const to = source.indexOf('*/', i + 2) + 2;
      blank(i, to);
      i = to;
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < source.length && source[j] !== c) j += source[j] === '\\' ? 2 : 1;
      blank(i + 1, j);
      i = j + 1;
      lastSignificant = c;
      continue;
    }
    if (c === '`' || (c === '}' && templateDepths.at(-1) === depth)) {
      if (c === '}') templateDepths.pop();
      let j = i + 1;
      while (j < source.length && source[j] !== '`' && !(source[j] === '$' && source[j + 1] === '{')) j += source[j] === '\\' ? 2 : 1;
      blank(i + 1, j);
      if (source[j] === '$') {
        templateDepths.push(depth);
        i = j + 2;
      } else i = j + 1;
      lastSignificant = '`';
      continue;
    }
    if (c === '/' && /[(,=:[!&|?{};]|^$/.test(lastSignificant)) {
      let j = i + 1;
      let inClass = false;
      while (j < source.length && (source[j] !== '/' || inClass) && source[j] !== '\n') {
        if (source[j] === '[') inClass = true;
        if (source[j] === ']') inClass = false;
        j += source[j] === '\\' ? 2 : 1;
      }
      blank(i + 1, j);
      i = j + 1;
      lastSignificant = '/';
      continue;
    }
    if (c === '{') depth++;
    if (c === '}') depth--;
    if (!/\s/.test(c)) lastSignificant = c;
    i++;
  }
  return out.join('');
}

/** Whether the `{` at `at` opens a function body. */
function opensFunction(code: string, at: number): boolean {
  const before = code.slice(Math.max(0, at - 400), at).trimEnd();
  if (before.endsWith('=>')) return true;
  // A return type may stand between the parameters and the body: `): Promise<void> {`.
  const close = before.match(/\)\s*(?::[^{};=]*)?$/);
  if (!close) return false;
  let j = before.length - close[0].length;
  let open = 0;
  for (; j >= 0; j--) {
    if (before[j] === ')') open++;
    if (before[j] === '(' && --open === 0) break;
  }
  const word = before.slice(0, Math.max(0, j)).match(/([A-Za-z_$][\w$]*)\s*$/)?.[1];
  return word === undefined || !CONTROL_WORDS.has(word);
}

/** Every function body in `source` longer than `maxLines` lines, counted from its opening line to its closing brace. */
export function longFunctions(source: string, maxLines: number): LongFunction[] {
  const code = codeOnly(source);
  const lineAt: number[] = [];
  let line = 1;
  for (const c of code) {
    lineAt.push(line);
    if (c === '\n') line++;
  }
  const opened: { at: number; body: boolean }[] = [];
  const long: LongFunction[] = [];
  for (let i = 0; i < code.length; i++) {
    if (code[i] === '{') opened.push({ at: i, body: opensFunction(code, i) });
    if (code[i] !== '}') continue;
    const block = opened.pop();
    if (!block?.body) continue;
    const lines = lineAt[i]! - lineAt[block.at]! + 1;
    if (lines > maxLines) long.push({ line: lineAt[block.at]!, lines });
  }
  return long;
}

/** Statements (upper case, as the code writes them) in string and template text: what only a table's owner in libs may write. */
const RAW_STATEMENT = /\b(SELECT\s+(DISTINCT\s+)?[\w"*(]|INSERT\s+INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s)/;
/** Calls that run SQL or reach TypeORM itself, past the owners' functions. */
const STORE_CALL = /\.(query|createQueryBuilder|getRepository)\s*[<(]|\.manager\.|\.dataSource\b|\b(sql|tx)\.(all|run)\s*[<(]/;

/** Where `source` holds SQL or a direct store call, as `line: text`. */
export function sqlIn(source: string): string[] {
  const code = codeOnly(source).split('\n');
  return source.split('\n').flatMap((text, index) => {
    const literalText = [...text.matchAll(/'[^']*'|"[^"]*"|`[^`]*`?/g)].map((match) => match[0]).join(' ');
    return RAW_STATEMENT.test(literalText) || STORE_CALL.test(code[index] ?? '') ? [`${index + 1}: ${text.trim()}`] : [];
  });
}
