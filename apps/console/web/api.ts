/** The public management API, called with the signed-in key. The console uses nothing else. */

/** An answer outside 2xx, carrying the API's `{error, message, code, details}` envelope. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: { field?: string; message: string }[] = [],
  ) {
    super(message);
  }
}

export interface Pagination {
  total: number;
  page: number;
  pageSize: number;
  /** Absent or true: `total` is exact; false: `total` is a lower bound. */
  totalExact?: boolean;
  /** A search that stopped at its bound: matches older than this were not looked for. */
  searchedBackTo?: string;
}

export interface Page<T> {
  data: T[];
  pagination: Pagination;
}

export type Query = Record<string, string | number | boolean | undefined>;

export interface Api {
  get<T>(path: string, query?: Query): Promise<T>;
  send<T>(method: 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T>;
}

function queryString(query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(name, String(value));
  const text = params.toString();
  return text ? `?${text}` : '';
}

async function answer<T>(response: Response): Promise<T> {
  const text = await response.text();
  const parsed = text && (response.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text;
  if (response.ok) return parsed as T;
  const envelope = typeof parsed === 'object' && parsed !== null ? parsed : {};
  throw new ApiError(response.status, envelope.code ?? 'HTTP_ERROR', envelope.message ?? `The API answered ${response.status}`, envelope.details);
}

export function createApi(key: string): Api {
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(`/api${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch {
      throw new ApiError(0, 'NETWORK_ERROR', 'The relay could not be reached; check that it runs and try again');
    }
    return answer<T>(response);
  };
  return {
    get: (path, query) => call('GET', `${path}${queryString(query)}`),
    send: (method, path, body) => call(method, path, body),
  };
}
