import { compileFieldPath, FieldBudgetExceededError, FieldPathError, selectFields } from './field-path.js';
import type { PayloadDocument } from './payload-document.js';

/** What a masked or hidden field shows instead of its value. */
export const MASK = '****';

/** Nodes one body's paths may visit together (a body holds at most MAX_FIELD_BYTES, so ~that many nodes). */
export const FIELD_SELECTION_BUDGET = 1_000_000;

/**
 * A copy of the document with every value that one of the JSONPath expressions selects replaced by
 * `****`. A path selecting the root replaces the whole document, and so does a path that cannot be
 * compiled (stored before paths were checked) or a selection beyond the budget: a field that cannot be
 * located is hidden with everything around it rather than shown. The original is not changed.
 */
export function replaceFields<D extends PayloadDocument>(document: D, paths: readonly string[]): D {
  let value: unknown = structuredClone(document.value);
  const budget = { remaining: FIELD_SELECTION_BUDGET, limit: FIELD_SELECTION_BUDGET };
  try {
    for (const path of paths) {
      for (const match of selectFields(value, compileFieldPath(path), budget)) {
        if (match.parent === null || match.key === null) value = MASK;
        else match.parent[match.key] = MASK;
      }
    }
  } catch (error) {
    if (!(error instanceof FieldPathError || error instanceof FieldBudgetExceededError)) throw error;
    value = MASK;
  }
  return { kind: document.kind, value } as D;
}
