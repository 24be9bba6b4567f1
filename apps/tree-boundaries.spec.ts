import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { longFunctions, sqlIn } from '../libs/testing/source-checks.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const APPS = path.join(ROOT, 'apps');
const LIBS = path.join(ROOT, 'libs');

const isSpec = (file: string) => file.endsWith('.spec.ts');
const relative = (file: string) => path.relative(ROOT, file).split(path.sep).join('/');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'web' || entry.name === 'node_modules' ? [] : sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** Relative imports of `file`, resolved to repository paths (`apps/api/api-role.ts`). */
function importsOf(file: string): string[] {
  return [...fs.readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((match) =>
    relative(path.resolve(path.dirname(file), match[1]!)).replace(/\.js$/, '.ts'),
  );
}

describe('Tree boundaries', () => {
  it('finds a raw statement and a direct store call, but not words in prose', () => {
    expect(sqlIn("await store.sql.all('SELECT id FROM destinations')")).to.have.length(1);
    expect(sqlIn('const rows = await store.sql.all<{ id: string }>(statement);')).to.have.length(1);
    expect(sqlIn('const n = await tx.run(statement);')).to.have.length(1);
    expect(sqlIn('const rows = await dataSource.getRepository(Entity).find();')).to.have.length(1);
    expect(sqlIn("throw new Error('Select a destination to update');")).to.deep.equal([]);
    expect(sqlIn('// SELECT id FROM destinations, as the owner does')).to.deep.equal([]);
  });

  it('apps hold no SQL and no TypeORM calls: every table is reached through its owner in libs', () => {
    const found = sourceFiles(APPS)
      .filter((file) => !isSpec(file))
      .flatMap((file) => sqlIn(fs.readFileSync(file, 'utf8')).map((line) => `${relative(file)}:${line}`));
    expect(found).to.deep.equal([]);
  });

  it('no lib imports an app or the harnesses that drive apps (testing/)', () => {
    const crossings = sourceFiles(LIBS).flatMap((file) =>
      importsOf(file)
        .filter((target) => target.startsWith('apps/') || target.startsWith('testing/'))
        .map((target) => `${relative(file)} -> ${target}`),
    );
    expect(crossings).to.deep.equal([]);
  });

  it('no code function in apps is over 80 lines', () => {
    const long = sourceFiles(APPS)
      .filter((file) => !isSpec(file))
      .flatMap((file) => longFunctions(fs.readFileSync(file, 'utf8'), 80).map((fn) => `${relative(file)}:${fn.line} (${fn.lines} lines)`));
    expect(long).to.deep.equal([]);
  });
});

describe('longFunctions', () => {
  const body = (lines: number) => Array.from({ length: lines - 2 }, (_, i) => `  total += ${i};`).join('\n');

  it('counts a function from its opening line to its closing brace, nested ones on their own', () => {
    const source = `export function outer(): number {\n  let total = 0;\n  const inner = () => {\n${body(82)}\n  };\n  return total;\n}\n`;
    expect(longFunctions(source, 80)).to.deep.equal([
      { line: 3, lines: 82 },
      { line: 1, lines: 86 },
    ]);
  });

  it('takes no block of an if, a loop, an object, or braces inside strings, templates and comments for a function', () => {
    const source = `if (ready) {\n${body(90)}\n}\nconst text = \`\${'{'} {\n${body(90)}\n}\`;\n// function f() {\nconst o = {\n${body(90)}\n};\n`;
    expect(longFunctions(source, 80)).to.deep.equal([]);
  });
});
