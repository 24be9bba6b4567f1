import { z } from 'zod';

/** Response building blocks shared by the operations' documented schemas. */

export const EXAMPLE_TIME = '2026-11-23T18:00:00.000Z';

// Documented by its format (checked by validators) rather than zod's long ISO pattern, repeated in every use.
export const timestamp = z.string().meta({ format: 'date-time', description: 'ISO 8601, UTC', example: EXAMPLE_TIME });

/** A secret as responses show it: `****` and its last 4 characters. */
export const maskedSecret = z.string().meta({ description: '`****` followed by the last 4 characters', example: '****c2V0' });

const pagination = z
  .object({ total: z.number().int().min(0), page: z.number().int().min(1), pageSize: z.number().int().min(1).max(100) })
  .meta({ id: 'Pagination' });

/** A list answer (SPEC 4): `{data, pagination}`. */
export function pageOf<Item extends z.ZodType>(item: Item, id: string) {
  return z.object({ data: z.array(item), pagination }).meta({ id });
}

export function pageExample<Item>(item: Item) {
  return { data: [item], pagination: { total: 1, page: 1, pageSize: 20 } };
}
