import { request as undiciRequest } from 'undici';

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

/** A tiny real-HTTP client for API tests: sends JSON with a bearer key and parses the answer. */
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
    return { status: response.statusCode, headers: response.headers, body: parsed as T, text };
  };
}

export type ApiCall = ReturnType<typeof apiClient>;
