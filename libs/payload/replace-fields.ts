import { JSONPath } from 'jsonpath-plus';
import type { PayloadDocument } from './payload-document.js';

/** What a masked or hidden field shows instead of its value. */
export const MASK = '****';

/**
 * A copy of the document with every value that one of the JSONPath expressions selects replaced by
 * `****`. A path selecting the root replaces the whole document. The original is not changed.
 */
export function replaceFields<D extends PayloadDocument>(document: D, paths: readonly string[]): D {
  let value: unknown = structuredClone(document.value);
  for (const path of paths) {
    for (const match of JSONPath({ path, json: value as object, resultType: 'all' }) as { parent: unknown; parentProperty: string | number | null }[]) {
      if (match.parent === null || match.parentProperty === null) value = MASK;
      else (match.parent as Record<string | number, unknown>)[match.parentProperty] = MASK;
    }
  }
  return { kind: document.kind, value } as D;
}
