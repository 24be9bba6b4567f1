import { FieldBudget, FieldBudgetExceededError } from './field-budget.js';
import { compileFieldPath, FieldPathError, selectFields } from './field-path.js';
import type { PayloadDocument } from './payload-document.js';

/** What a masked or hidden field shows instead of its value. */
export const MASK = '****';

/**
 * A copy of the document with every value that one of the JSONPath expressions selects replaced by
 * `****`; null when a path cannot be compiled (stored before paths were checked) or the selection runs
 * past the budget, that is when the fields cannot all be located. The original is not changed.
 */
export function replaceSelectedFields<D extends PayloadDocument>(document: D, paths: readonly string[], budget: FieldBudget): D | null {
  let value: unknown = structuredClone(document.value);
  try {
    for (const path of paths) {
      for (const match of selectFields(value, compileFieldPath(path), budget)) {
        if (match.parent === null || match.key === null) value = MASK;
        else match.parent[match.key] = MASK;
      }
    }
  } catch (error) {
    if (error instanceof FieldPathError || error instanceof FieldBudgetExceededError) return null;
    throw error;
  }
  return { kind: document.kind, value } as D;
}

/**
 * `replaceSelectedFields`, where a field that cannot be located is hidden with everything around it
 * rather than shown: the whole document is then the mask, as is one whose root a path selects.
 */
export function replaceFields<D extends PayloadDocument>(document: D, paths: readonly string[], budget = new FieldBudget()): D {
  return replaceSelectedFields(document, paths, budget) ?? ({ kind: document.kind, value: MASK } as D);
}
