import { z } from 'zod';

const values = z.record(z.string(), z.union([z.string(), z.array(z.string())]));

/** What a transformation receives and returns: `body` as route filters see it (filter-document.ts). */
export const transformResultSchema = z
  .object({
    body: z.unknown(),
    headers: values,
    query: values,
    path: z.string(),
  })
  // `unknown` alone would let the body be absent.
  .refine((request) => 'body' in request, { message: 'Required', path: ['body'] });

export type TransformRequest = z.infer<typeof transformResultSchema>;
