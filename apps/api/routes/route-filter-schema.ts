import { z } from 'zod';
import { filterIssues } from '../../../libs/filters/route-filter.js';

export type RouteFilter = Record<string, unknown> | null;

/** A route filter, or null for none; each fault is named by its path inside the filter (`filter.$or[1].type`). */
export const routeFilterSchema = z.any().superRefine((value, ctx) => {
  for (const issue of filterIssues(value)) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
}) as z.ZodType<RouteFilter>;
