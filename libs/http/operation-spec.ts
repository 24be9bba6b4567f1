import type { z } from 'zod';

/** Who may call an operation: anyone (`public`), or an API key holding this scope or a wider one. */
export type OperationScope = 'public' | 'admin' | 'write' | 'read';

/** A body in the document: its schema, and an example that must satisfy it (a test checks every one). */
export interface DocumentedContent<S extends z.ZodType = z.ZodType> {
  schema: S;
  example: z.input<S>;
}

export interface DocumentedResponse {
  description: string;
  /** A JSON body; none for 204. */
  body?: DocumentedContent;
  /** Bodies of other media types (a payload as received, Prometheus text), by content type. */
  content?: Record<string, DocumentedContent>;
  /** Response headers worth naming, with a description each. */
  headers?: Record<string, string>;
}

/**
 * One HTTP operation as the OpenAPI document describes it. The management API's operations carry their
 * handler too (apps/api/api-operation.ts) and are routed from the same object; the others (ingest,
 * probes, metrics) are declared beside their own routers.
 */
export interface DocumentedOperation<Query extends z.ZodType | undefined = z.ZodType | undefined, Body extends z.ZodType | undefined = z.ZodType | undefined> {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** An OpenAPI path template: `/api/sources/{id}`. */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  scope: OperationScope;
  /**
   * A boolean query flag that, when true, raises the scope the call needs: an export with
   * `includeSensitive=true` shows secrets in clear, so it needs `admin` where the export itself needs `read`.
   */
  raisedScope?: { flag: string; scope: OperationScope };
  /** Path parameters other than `{id}` (documented as a resource id), by name. */
  pathParams?: Record<string, { description: string; example: string }>;
  query?: Query;
  body?: DocumentedContent<Body & z.ZodType> & { required: boolean; contentType?: string };
  /** Success responses by status. */
  responses: Record<number, DocumentedResponse>;
  /** Error statuses beyond those every operation of its kind can answer (see the document builder). */
  errors?: readonly number[];
}
