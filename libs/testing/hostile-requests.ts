import type { SeededRandom } from './seeded-random.js';

/**
 * Test support: malformed and hostile HTTP requests, generated from a seeded random source so that a
 * run can be repeated exactly. Each request is aimed at one routed endpoint, with its path parameters
 * filled by real ids, another organization's ids or hostile text, and then spoiled in one or more ways:
 * wrong types, huge values, unicode, path tricks, hostile queries and bodies, header floods.
 */

export interface HostileRequest {
  /** The endpoint it is aimed at. */
  endpoint: FuzzEndpoint;
  /** What was generated, for failure messages. */
  label: string;
  method: string;
  /** Sent as is: may hold any bytes when `raw` is set, else only what node:http lets through. */
  path: string;
  /** In order; names may repeat (raw requests only). */
  headers: [string, string][];
  body?: Buffer;
  /** Written byte for byte on a socket of its own: malformed HTTP that node:http would refuse to send. */
  raw?: boolean;
}

export interface FuzzEndpoint {
  method: string;
  /** A route pattern, e.g. `/api/sources/:id` or `/ingest/:org/:source`. */
  path: string;
}

export interface FuzzTargets {
  endpoints: readonly FuzzEndpoint[];
  /** Real ids of the caller's organization by prefix (`src`, `dst`, `rte`, `evt`), used where a route takes `:id`. */
  ids: Readonly<Record<string, readonly string[]>>;
  /** Ids that a DELETE must never name (the fixtures the rest of the run reads). */
  keep: ReadonlySet<string>;
  /** Ids of another organization. */
  foreignIds: readonly string[];
  /** Concrete `[org, source]` pairs for the ingest route. */
  ingestTargets: readonly (readonly [string, string])[];
  apiKey: string;
}

const LONG = 'a'.repeat(5000);
const HUGE = 'z'.repeat(300_000);

/** Strings that have broken parsers, validators, SQL and templating somewhere. */
const HOSTILE_STRINGS = [
  '',
  ' ',
  'null',
  'undefined',
  'NaN',
  '-1',
  '0',
  '1e309',
  '99999999999999999999999',
  '0x1F',
  'true',
  '[]',
  '{}',
  '__proto__',
  'constructor',
  "' OR 1=1 --",
  '"; DROP TABLE sources; --',
  '%',
  '%%',
  '%00',
  '\u0000',
  'a\u0000b',
  '\r\n',
  'line\r\nX-Injected: 1',
  '../../etc/passwd',
  '..\\..\\windows',
  '<script>alert(1)</script>',
  '${7*7}',
  '{{7*7}}',
  'Ünïcödé',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
  '\u202Egnp.exe',
  '\uFEFF',
  '\uD800',
  '🦄🦄🦄',
  'http://169.254.169.254/latest/meta-data',
  'file:///etc/passwd',
  'javascript:alert(1)',
  'https://user:pass@example.com/',
  'src_00000000000000000000000000',
  'evt_' + 'Z'.repeat(26),
  '****',
  '****abcd',
  LONG,
];

const FIELD_NAMES = [
  'name', 'slug', 'description', 'provider', 'verificationConfig', 'enabled', 'rejectInvalidSignatures', 'rateLimitPerMinute',
  'ipFilterMode', 'ipAllowlist', 'ipDenylist', 'encryptFields', 'maskFields', 'dedupEnabled', 'dedupStrategy', 'dedupWindowHours',
  'dedupCustomHeader', 'url', 'method', 'headers', 'authType', 'authConfig', 'timeoutMs', 'retryPolicy', 'sourceId', 'destinationId',
  'ids', 'eventIds', 'destinationIds', 'sources', 'destinations', 'conflictStrategy', 'validateOnly', 'version', 'payload', 'filter',
  'isActive', 'signingSecret', 'id', 'createdAt', 'webhookUrl', 'type', 'secret', 'header', 'algorithm', 'encoding', 'prefix',
  'maxRetries', 'initialDelay', 'maxDelay', 'backoffMultiplier', 'username', 'password', 'token', 'key', 'headerName', 'headerValue',
  '__proto__', 'constructor', 'prototype', '', '💥',
];

const QUERY_NAMES = [
  'page', 'pageSize', 'status', 'sourceId', 'destinationId', 'from', 'to', 'search', 'signatureValid', 'includePayload',
  'includeDeliveries', 'enabled', 'ids', 'includeSensitive', 'provider', '__proto__', 'constructor', 'toString',
];

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=utf-16',
  'application/merge-patch+json',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=xyz',
  'application/xml',
  'application/octet-stream',
  'garbage',
  ';;;',
];

/** Valid bodies by collection: spoiled in one field, they get past the shape checks to deeper ones. */
const TEMPLATES: Record<string, Record<string, unknown>> = {
  sources: { name: 'Fuzz', slug: 'fuzz-src', provider: 'codehost', dedupEnabled: true, dedupStrategy: 'auto' },
  destinations: { name: 'Fuzz', url: 'https://fuzz.example.com/hook', authType: 'bearer', authConfig: { token: 'tok_fuzz_1234' } },
  routes: { enabled: true },
  events: { destinationIds: [] },
};

/** Percent-encodes the UTF-8 bytes of any string, lone surrogates too (encodeURIComponent throws on them). */
function percentEncode(text: string): string {
  return [...Buffer.from(text, 'utf8')].map((byte) => (/[A-Za-z0-9\-_.~]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
}

export function createHostileRequests(random: SeededRandom, targets: FuzzTargets) {
  const api = targets.endpoints.filter((e) => !e.path.startsWith('/ingest') && e.method !== 'HEAD');
  const ingest = targets.endpoints.filter((e) => e.path.startsWith('/ingest') && e.method !== 'HEAD');

  const hostileString = (): string => (random.chance(0.002) ? HUGE : random.pick(HOSTILE_STRINGS));

  function hostileValue(depth = 0): unknown {
    switch (random.int(0, depth > 3 ? 5 : 8)) {
      case 0:
        return hostileString();
      case 1:
        return random.pick([-1, 0, 1, -0.5, 1.5, 2 ** 31, 2 ** 53 + 1, -(2 ** 63), 1e308, -1e308, 5e-324, 101, 1001, 86_400_001]);
      case 2:
        return random.pick([true, false]);
      case 3:
        return null;
      case 4:
        return random.chance(0.05) ? Array.from({ length: 1001 }, (_, i) => `id_${i}`) : [];
      case 5:
        return random.pick(targets.foreignIds);
      case 6:
        return Array.from({ length: random.int(1, 4) }, () => hostileValue(depth + 1));
      case 7:
        return hostileObject(depth + 1);
      default:
        return { [random.pick(FIELD_NAMES)]: hostileValue(depth + 1) };
    }
  }

  function hostileObject(depth = 0): Record<string, unknown> {
    const object: Record<string, unknown> = {};
    for (let i = random.int(1, 5); i > 0; i -= 1) {
      // defineProperty: `__proto__` must be an own key of the JSON text, not a prototype change here.
      Object.defineProperty(object, random.pick(FIELD_NAMES), { value: hostileValue(depth), enumerable: true, writable: true, configurable: true });
    }
    return object;
  }

  function nested(depth: number): string {
    return random.chance(0.5) ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
  }

  function jsonBody(collection: string): string {
    switch (random.int(0, 9)) {
      case 0:
        return random.pick(['{', '{"a":', '{"a":1,}', "{'a':1}", 'nul', '{"a":1}{"b":2}', '\u0000', '{"a":"\\ud800"}', '{"a":1e999}', '']);
      case 1:
        return JSON.stringify(hostileValue(3));
      case 2:
        return nested(random.pick([50, 500, 2000]));
      case 3:
      case 4: {
        const template = TEMPLATES[collection];
        if (template) {
          const spoiled: Record<string, unknown> = { ...template };
          Object.defineProperty(spoiled, random.pick([...Object.keys(template), ...FIELD_NAMES]), {
            value: hostileValue(1),
            enumerable: true,
            writable: true,
            configurable: true,
          });
          return JSON.stringify(spoiled);
        }
        return JSON.stringify(hostileObject());
      }
      case 5:
        return `{"ids":${JSON.stringify([...(targets.ids.src ?? []).filter((id) => !targets.keep.has(id)), ...targets.foreignIds, hostileString()])}}`;
      default:
        return JSON.stringify(hostileObject());
    }
  }

  function ingestBody(): Buffer {
    switch (random.int(0, 5)) {
      case 0:
        return Buffer.alloc(0);
      case 1:
        return Buffer.from(Array.from({ length: random.int(1, 2048) }, () => random.int(0, 255)));
      case 2:
        return Buffer.alloc(random.pick([70_000, 300_000]), 'x');
      case 3:
        return Buffer.from(new URLSearchParams({ [hostileString().slice(0, 100)]: hostileString().slice(0, 100), a: '1' }).toString());
      default:
        return Buffer.from(jsonBody(''));
    }
  }

  function idFor(path: string, method: string): string {
    const kind = ({ sources: 'src', destinations: 'dst', routes: 'rte', events: 'evt' } as Record<string, string>)[path.split('/')[2] ?? ''];
    const own = (kind && targets.ids[kind]) || [];
    const usable = method === 'DELETE' ? own.filter((id) => !targets.keep.has(id)) : own;
    const roll = random.next();
    if (roll < 0.35 && usable.length > 0) return random.pick(usable);
    if (roll < 0.45) return random.pick(targets.foreignIds);
    return hostileString();
  }

  const encode = (segment: string) => (random.chance(0.8) ? percentEncode(segment) : segment.replace(/[^\u0021-\u00ff]/g, percentEncode));

  function fillPath(endpoint: FuzzEndpoint): string {
    const target = random.pick(targets.ingestTargets);
    return endpoint.path.replace(/:(\w+)/g, (_, name: string) => {
      if (name === 'org') return random.chance(0.85) ? target[0] : encode(hostileString().slice(0, 300));
      if (name === 'source') return random.chance(0.85) ? target[1] : encode(hostileString().slice(0, 300));
      return encode(idFor(endpoint.path, endpoint.method).slice(0, 2000));
    });
  }

  /** Tricks that a router or a prefix check might read differently from what was meant. */
  function pathTrick(path: string): string {
    switch (random.int(0, 9)) {
      case 0:
        return path.replace('/api/', '//api//');
      case 1:
        return `${path}/`;
      case 2:
        return path.replace(/^\/(api|ingest)\//, '/$1/./');
      case 3:
        return `${path}/..%2F..%2F`;
      case 4:
        return path.toUpperCase();
      case 5:
        return `${path}%00`;
      case 6:
        return `${path};jsessionid=1`;
      case 7:
        return `${path}/%ZZ`;
      case 8:
        return path.replace(/\/[^/]*$/, '/%2e%2e');
      default:
        return `${path}/${'x'.repeat(random.pick([300, 9000]))}`;
    }
  }

  function query(): string {
    const pairs = Array.from({ length: random.int(1, 4) }, () => {
      const name = random.pick(QUERY_NAMES);
      const value = random.chance(0.3) ? String(random.pick([-1, 0, 1, 100, 101, 1e21, 2 ** 53])) : hostileString().slice(0, 3000);
      return `${percentEncode(name)}=${percentEncode(value)}`;
    });
    if (random.chance(0.1)) pairs.push(pairs[0]!);
    return `?${pairs.join('&')}`;
  }

  function authorization(isApi: boolean): [string, string][] {
    const roll = random.next();
    if (!isApi && roll < 0.5) return [];
    if (roll < 0.8) return [['authorization', `Bearer ${targets.apiKey}`]];
    if (roll < 0.85) return [];
    return [['authorization', random.pick(['Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', `bearer ${targets.apiKey}`, `Bearer ${'k'.repeat(600)}`, 'Bearer rk_forged_key_0000000000000000'])]];
  }

  /** Header names and values that node:http sends. */
  function hostileHeaders(): [string, string][] {
    const latin = (value: string) => value.replace(/[^\t\u0020-\u007e\u0080-\u00ff]/g, '?').slice(0, 2000);
    const names = ['x-hub-signature-256', 'stripe-signature', 'x-slack-signature', 'x-slack-request-timestamp', 'webhook-id', 'webhook-timestamp',
      'webhook-signature', 'x-twilio-signature', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'x-github-delivery', 'idempotency-key',
      'x-request-id', 'accept', 'accept-encoding', 'if-none-match', 'range', 'x-http-method-override'];
    const headers = Array.from({ length: random.int(0, 4) }, () => [random.pick(names), latin(hostileString())] as [string, string]);
    // Rarely: an unmet Expect is answered before any handler runs, so it would hide the rest of the request.
    if (random.chance(0.01)) headers.push(['expect', latin(hostileString()) || 'x']);
    return headers;
  }

  /** Header floods: many headers, one huge one, repeated framing headers, or a bogus Content-Length. */
  function flood(headers: [string, string][], body: Buffer | undefined): { headers: [string, string][]; raw: boolean } {
    switch (random.int(0, 4)) {
      case 0:
        return { headers: [...headers, ...Array.from({ length: random.pick([200, 1000, 2500]), }, (_, i) => [`x-flood-${i}`, 'v'] as [string, string])], raw: true };
      case 1:
        return { headers: [...headers, ['x-huge', 'h'.repeat(random.pick([8000, 20_000]))]], raw: true };
      case 2:
        return { headers: [...headers, ['content-type', 'application/json'], ['content-type', 'text/plain']], raw: true };
      case 3:
        return { headers: [...headers, ['content-length', String((body?.length ?? 0) + 1)], ['content-length', '0']], raw: true };
      default:
        return { headers: [...headers, ['authorization', `Bearer ${targets.apiKey}`], ['authorization', 'Bearer other']], raw: true };
    }
  }

  return function next(index: number): HostileRequest {
    const toIngest = ingest.length > 0 && random.chance(0.3);
    const endpoint = toIngest ? random.pick(ingest) : random.pick(api);
    const collection = endpoint.path.split('/')[2] ?? '';
    let path = fillPath(endpoint);
    const tricks: string[] = [];
    if (random.chance(0.12)) {
      path = pathTrick(path);
      tricks.push('path');
    }
    if (endpoint.method === 'GET' ? random.chance(0.6) : random.chance(0.1)) {
      path += query();
      tricks.push('query');
    }
    let headers: [string, string][] = [...authorization(!toIngest), ...hostileHeaders()];
    let body: Buffer | undefined;
    if (endpoint.method !== 'GET' && random.chance(endpoint.method === 'DELETE' ? 0.3 : 0.9)) {
      body = toIngest ? ingestBody() : Buffer.from(jsonBody(collection));
      headers.push(['content-type', random.chance(0.75) ? 'application/json' : random.pick(CONTENT_TYPES)]);
      tricks.push('body');
    }
    let raw = false;
    if (random.chance(0.04)) {
      ({ headers, raw } = flood(headers, body));
      tricks.push('flood');
    }
    if (random.chance(0.03)) {
      // Bytes node:http would refuse to send: raw unicode in the path, a control character in a header.
      path = random.chance(0.5) ? `${path}/${random.pick(['𝔘nicode', 'ü', 'a b', '\u0001'])}` : path;
      headers.push(['x-raw', random.pick(['caf\u00e9 \u2603', 'a\u0001b', 'tab\tin'])]);
      raw = true;
      tricks.push('raw');
    }
    return { endpoint, label: `#${index} ${endpoint.method} ${endpoint.path} [${tricks.join(',')}]`, method: endpoint.method, path, headers, body, raw };
  };
}
