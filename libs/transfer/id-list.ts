import { z } from 'zod';
import { queryString } from '../http/validate.js';
import { MAX_TRANSFER_ITEMS } from './transfer-kind.js';

/** A list of resource ids: 1 to 1000 strings; repeats count once. */
export const idListSchema = z
  .array(z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(100, 'is too long to be an id'), { error: 'must be an array of ids' })
  .min(1, 'must list at least one id')
  .max(MAX_TRANSFER_ITEMS, `must list at most ${MAX_TRANSFER_ITEMS} ids`)
  .transform((ids) => [...new Set(ids)]);

/** The same list given as a comma-separated query value (`ids=src_a,src_b`). */
export const commaSeparatedIds = queryString(100_000)
  .transform((text) => text.split(',').map((id) => id.trim()).filter((id) => id !== ''))
  .pipe(idListSchema);
