import { z } from 'zod';
import { ValidationError, type FieldIssue } from '../errors/errors.js';

/** Attach to a refinement so a failure answers with a spec code instead of VALIDATION_ERROR. */
export const specCode = (code: string) => ({ params: { code } });

function fieldOf(path: PropertyKey[]): string {
  return path.reduce<string>((acc, key) => {
    if (typeof key === 'number') return `${acc}[${key}]`;
    return acc === '' ? String(key) : `${acc}.${String(key)}`;
  }, '');
}

function issuesOf(error: z.ZodError): FieldIssue[] {
  return error.issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ field: fieldOf([...issue.path, key]), message: 'Unknown field' }));
    }
    return [{ field: fieldOf(issue.path) || '(body)', message: issue.message }];
  });
}

function specCodeOf(error: z.ZodError): string | undefined {
  for (const issue of error.issues) {
    const code = (issue as { params?: { code?: unknown } }).params?.code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/** Parses input or throws a ValidationError listing every field at fault. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, what = 'Request'): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const details = issuesOf(result.error);
  const code = specCodeOf(result.error);
  const first = details[0];
  const message = code && first ? `${first.field}: ${first.message}` : `${what} is invalid: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}`;
  throw new ValidationError(message, details, code);
}

/** Query values arrive as strings (or arrays when repeated); these accept only one well-formed value. */
const single = (value: unknown) => (Array.isArray(value) ? value[value.length - 1] : value);

export const queryBoolean = z.preprocess(
  single,
  z.enum(['true', 'false'], { error: 'must be true or false' }).transform((v) => v === 'true'),
);

export const queryString = (max = 200) => z.preprocess(single, z.string().max(max));

export const queryInteger = (min: number, max: number) =>
  z.preprocess(
    single,
    z
      .string()
      .regex(/^\d{1,9}$/, 'must be a whole number')
      .transform(Number)
      .pipe(z.number().int().min(min).max(max)),
  );

export const MAX_PAGE_SIZE = 100;

/** page >= 1; pageSize >= 1, larger than 100 is clamped to 100 (DESIGN.md "Pagination"). */
/** Documented as the integer a client sends, not as the digits zod reads from the query string. */
const documentedAsInteger = (description: string, example: number) => ({
  description,
  example,
  override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
    delete jsonSchema.pattern;
    Object.assign(jsonSchema, { type: 'integer', minimum: 1 });
  },
});

export const paginationShape = {
  page: queryInteger(1, 1_000_000).default(1).meta(documentedAsInteger('Page number, from 1 (default 1)', 1)),
  // Clamped before the number check, so that any run of digits (even past Number's range) means "the most".
  pageSize: z
    .preprocess(single, z.string().regex(/^\d+$/, 'must be a whole number').transform((digits) => Math.min(Number(digits), MAX_PAGE_SIZE)))
    .pipe(z.number().int().min(1, 'must be at least 1'))
    .default(20)
    .meta(documentedAsInteger('Items per page (default 20); more than 100 is read as 100', 20)),
};

export function pageEnvelope<T>(data: T[], total: number, page: { page: number; pageSize: number }) {
  return { data, pagination: { total, page: page.page, pageSize: page.pageSize } };
}
