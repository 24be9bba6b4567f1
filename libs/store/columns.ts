import type { EntitySchemaColumnOptions, ValueTransformer } from 'typeorm';

/** Timestamps are epoch milliseconds in a BIGINT on both databases; pg hands BIGINT back as a string. */
const epochMs: ValueTransformer = {
  to: (value: number | null | undefined) => value,
  from: (value: string | number | null) => (value === null || value === undefined ? null : Number(value)),
};

/** JSON kept as TEXT so both databases store and compare it the same way. */
const jsonText: ValueTransformer = {
  to: (value: unknown) => (value === undefined ? undefined : JSON.stringify(value)),
  from: (value: string | null) => (value === null || value === undefined ? null : JSON.parse(value)),
};

export const column = {
  id: (): EntitySchemaColumnOptions => ({ type: 'varchar', length: 40, primary: true }),
  ref: (nullable = false): EntitySchemaColumnOptions => ({ type: 'varchar', length: 40, nullable }),
  text: (nullable = false): EntitySchemaColumnOptions => ({ type: 'text', nullable }),
  varchar: (length: number, nullable = false): EntitySchemaColumnOptions => ({ type: 'varchar', length, nullable }),
  boolean: (): EntitySchemaColumnOptions => ({ type: 'boolean' }),
  integer: (nullable = false): EntitySchemaColumnOptions => ({ type: 'integer', nullable }),
  timestamp: (nullable = false): EntitySchemaColumnOptions => ({ type: 'bigint', nullable, transformer: epochMs }),
  json: (nullable = false): EntitySchemaColumnOptions => ({ type: 'text', nullable, transformer: jsonText }),
};
