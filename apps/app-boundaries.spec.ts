import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';

const APPS = path.resolve(import.meta.dirname);

/** Tests may reach into any app; their support lives in libs/testing, so nothing else in apps is exempt. */
const isTest = (file: string) => file.endsWith('.spec.ts');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'web' || entry.name === 'node_modules' ? [] : sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** `from './x.js'` imports of a file that land in another app, as `app/file.ts -> app/file.ts`. */
function crossAppImports(file: string): string[] {
  const from = path.relative(APPS, file);
  const app = from.split(path.sep)[0];
  return [...fs.readFileSync(file, 'utf8').matchAll(/from '(\.{1,2}\/[^']+)'/g)]
    .map((match) => path.relative(APPS, path.resolve(path.dirname(file), match[1]!)).replace(/\.js$/, '.ts'))
    .filter((target) => !target.startsWith('..') && target.split(path.sep)[0] !== app)
    .map((target) => `${from} -> ${target}`.split(path.sep).join('/'));
}

describe('App boundaries', () => {
  it('no app imports another, but the composition root (apps/relay) and tests', () => {
    const crossings = sourceFiles(APPS)
      .filter((file) => !isTest(file) && !path.relative(APPS, file).startsWith(`relay${path.sep}`))
      .flatMap(crossAppImports);
    expect(crossings).to.deep.equal([]);
  });
});
