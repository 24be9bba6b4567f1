import { request as undiciRequest } from 'undici';
import { openApiDocument } from '../apps/api/api-operations.js';
import { createResponseChecker, type ResponseChecker } from '../libs/testing/openapi-responses.js';

export interface ApiResponse<T = any> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
  text: string;
}

export interface RequestOptions {
  key?: string | null;
  body?: unknown;
  /** Sent as-is instead of JSON-encoding `body` (malformed-input tests). */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

let checker: ResponseChecker | undefined;

/** Every answer a test receives must be one the OpenAPI document describes: status, content type and body. */
export class UndocumentedResponseError extends Error {}

function checkAgainstDocument(method: string, path: string, response: ApiResponse): void {
  checker ??= createResponseChecker(openApiDocument());
  const contentType = String(response.headers['content-type'] ?? '');
  const problems = checker(method, path, { status: response.status, contentType, body: response.body, text: response.text });
  if (problems.length > 0) throw new UndocumentedResponseError(`The answer does not fit docs/openapi.json:\n  ${problems.join('\n  ')}`);
}

/**
 * A tiny real-HTTP client for API tests: sends JSON with a bearer key, parses the answer and checks it
 * against the OpenAPI document, so no handler can drift from what clients are promised.
 */
export function apiClient(baseUrl: string, defaultKey: string | null) {
  return async function call<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const key = options.key === undefined ? defaultKey : options.key;
    const headers: Record<string, string> = { ...options.headers };
    if (key) headers.authorization = `Bearer ${key}`;
    let body: string | Buffer | undefined = options.rawBody;
    if (body === undefined && options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await undiciRequest(`${baseUrl}${path}`, { method: method as 'GET', headers, body });
    const text = await response.body.text();
    let parsed: unknown = text;
    if ((response.headers['content-type'] ?? '').toString().includes('json') && text !== '') parsed = JSON.parse(text);
    const answer: ApiResponse<T> = { status: response.statusCode, headers: response.headers, body: parsed as T, text };
    checkAgainstDocument(method, path, answer);
    return answer;
  };
}

export type ApiCall = ReturnType<typeof apiClient>;
