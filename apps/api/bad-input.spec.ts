import { expect } from 'chai';
import { describeEachStore } from '../../libs/testing/store-targets.js';
import type { RequestOptions } from '../../testing/api-client.js';
import { startApiHarness, type ApiHarness } from '../../testing/api-harness.js';
import { z } from 'zod';
import { API_OPERATIONS } from './api-operations.js';

interface Fixture {
  source: string;
  destination: string;
  route: string;
}

interface BadRequest {
  title: string;
  method: string;
  path: (f: Fixture) => string;
  options?: RequestOptions;
  status: number;
  code: string;
  /** A field the `details` must name (VALIDATION_ERROR and the spec codes list the fields at fault). */
  field?: string;
}

const json = (body: unknown): RequestOptions => ({ body });
const raw = (rawBody: string, contentType: string): RequestOptions => ({ rawBody, headers: { 'content-type': contentType } });
const newSource = (extra: Record<string, unknown>) => json({ name: 'Bad', slug: 'bad-source', ...extra });
const newDestination = (extra: Record<string, unknown>) => json({ name: 'Bad', url: 'https://bad.example.com', ...extra });

const sources = () => '/api/sources';
const destinations = () => '/api/destinations';
const source = (f: Fixture) => `/api/sources/${f.source}`;
const destination = (f: Fixture) => `/api/destinations/${f.destination}`;

const invalid = (title: string, method: string, path: BadRequest['path'], options: RequestOptions, field: string): BadRequest => ({
  title,
  method,
  path,
  options,
  status: 400,
  code: 'VALIDATION_ERROR',
  field,
});

const CASES: BadRequest[] = [
  // Bodies that are not JSON objects.
  { title: 'malformed JSON on create', method: 'POST', path: sources, options: raw('{"name": "x", "slug":', 'application/json'), status: 400, code: 'INVALID_JSON' },
  { title: 'malformed JSON on patch', method: 'PATCH', path: destination, options: raw('{name: x}', 'application/json'), status: 400, code: 'INVALID_JSON' },
  { title: 'a form body', method: 'POST', path: sources, options: raw('name=x&slug=y', 'application/x-www-form-urlencoded'), status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
  { title: 'a text/plain body', method: 'PATCH', path: source, options: raw('{"name":"x"}', 'text/plain'), status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
  { title: 'a body with no content type', method: 'POST', path: destinations, options: { rawBody: '{"name":"x"}' }, status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
  invalid('a JSON array as body', 'POST', sources, raw('[{"name":"x","slug":"y"}]', 'application/json'), '(body)'),
  invalid('a JSON number as body', 'POST', destinations, raw('42', 'application/json'), '(body)'),
  invalid('a JSON string as body', 'PATCH', source, raw('"name"', 'application/json'), '(body)'),
  invalid('an empty JSON body on create', 'POST', sources, raw('', 'application/json'), 'name'),
  invalid('JSON null as body', 'POST', () => '/api/routes', raw('null', 'application/json'), '(body)'),

  // Wrong types.
  invalid('a number as name', 'POST', sources, newSource({ name: 123 }), 'name'),
  invalid('a string as enabled', 'PATCH', source, json({ enabled: 'yes' }), 'enabled'),
  invalid('a string as ipAllowlist', 'POST', sources, newSource({ ipFilterMode: 'allowlist', ipAllowlist: '10.0.0.1' }), 'ipAllowlist'),
  invalid('a string as timeoutMs', 'POST', destinations, newDestination({ timeoutMs: '1000' }), 'timeoutMs'),
  invalid('a number as a header value', 'PATCH', destination, json({ headers: { 'X-Count': 1 } }), 'headers.X-Count'),
  invalid('a number as retryPolicy', 'POST', destinations, newDestination({ retryPolicy: 5 }), 'retryPolicy'),
  invalid('a fractional maxRetries', 'PATCH', destination, json({ retryPolicy: { maxRetries: 1.5 } }), 'retryPolicy.maxRetries'),
  invalid('an unknown provider', 'POST', sources, newSource({ provider: 'carrier-pigeon' }), 'provider'),
  invalid('an unknown HTTP method', 'POST', destinations, newDestination({ method: 'GET' }), 'method'),
  invalid('an unknown verification type', 'PATCH', source, json({ verificationConfig: { type: 'rot13' } }), 'verificationConfig.type'),
  invalid('a string as route enabled', 'PATCH', (f) => `/api/routes/${f.route}`, json({ enabled: 'false' }), 'enabled'),
  invalid('a number as route sourceId', 'POST', () => '/api/routes', json({ sourceId: 1, destinationId: 'dst_x' }), 'sourceId'),

  // Unknown fields.
  invalid('an unknown field on source create', 'POST', sources, newSource({ colour: 'red' }), 'colour'),
  invalid('an unknown field on source patch', 'PATCH', source, json({ name: 'x', isActive: true }), 'isActive'),
  invalid('an unknown field on destination create', 'POST', destinations, newDestination({ secret: 'x' }), 'secret'),
  invalid('an unknown field inside retryPolicy', 'PATCH', destination, json({ retryPolicy: { maxRetries: 1, jitter: 0.5 } }), 'retryPolicy.jitter'),
  invalid('an unknown field inside verificationConfig', 'POST', sources, newSource({ verificationConfig: { type: 'codehost', algo: 'md5' } }), 'verificationConfig.algo'),
  invalid('an unknown field on route create', 'POST', () => '/api/routes', json({ sourceId: 'src_x', destinationId: 'dst_x', priority: 1 }), 'priority'),
  invalid('an unknown field on route patch', 'PATCH', (f) => `/api/routes/${f.route}`, json({ enabled: true, weight: 2 }), 'weight'),

  // Numbers out of range.
  invalid('pageSize=0', 'GET', () => '/api/sources?pageSize=0', {}, 'pageSize'),
  invalid('page=0', 'GET', () => '/api/destinations?page=0', {}, 'page'),
  invalid('pageSize=abc', 'GET', () => '/api/routes?pageSize=abc', {}, 'pageSize'),
  invalid('page=-1', 'GET', () => '/api/sources?page=-1', {}, 'page'),
  invalid('page=1.5', 'GET', () => '/api/sources?page=1.5', {}, 'page'),
  invalid('timeoutMs 70000', 'POST', destinations, newDestination({ timeoutMs: 70000 }), 'timeoutMs'),
  invalid('timeoutMs 999', 'PATCH', destination, json({ timeoutMs: 999 }), 'timeoutMs'),
  invalid('dedupWindowHours 200', 'POST', sources, newSource({ dedupWindowHours: 200 }), 'dedupWindowHours'),
  invalid('dedupWindowHours 0', 'PATCH', source, json({ dedupWindowHours: 0 }), 'dedupWindowHours'),
  invalid('maxRetries 50', 'POST', destinations, newDestination({ retryPolicy: { maxRetries: 50 } }), 'retryPolicy.maxRetries'),
  invalid('backoffMultiplier 11', 'PATCH', destination, json({ retryPolicy: { backoffMultiplier: 11 } }), 'retryPolicy.backoffMultiplier'),
  invalid('maxDelay below initialDelay', 'POST', destinations, newDestination({ retryPolicy: { initialDelay: 5000, maxDelay: 1000 } }), 'retryPolicy.maxDelay'),
  invalid('rateLimitPerMinute 0', 'PATCH', source, json({ rateLimitPerMinute: 0 }), 'rateLimitPerMinute'),
  invalid('a negative rateLimitPerMinute', 'POST', destinations, newDestination({ rateLimitPerMinute: -5 }), 'rateLimitPerMinute'),

  // Oversized strings.
  invalid('a name of 201 characters', 'POST', sources, newSource({ name: 'n'.repeat(201) }), 'name'),
  invalid('a description of 2001 characters', 'PATCH', destination, json({ description: 'd'.repeat(2001) }), 'description'),
  invalid('a url of 2049 characters', 'POST', destinations, newDestination({ url: `https://long.example.com/${'u'.repeat(2049 - 25)}` }), 'url'),
  invalid('an empty name', 'PATCH', source, json({ name: '   ' }), 'name'),

  // IP rules.
  invalid('an allowlist CIDR with prefix 33', 'POST', sources, newSource({ ipFilterMode: 'allowlist', ipAllowlist: ['10.0.0.0/33'] }), 'ipAllowlist[0]'),
  invalid('a denylist entry that is not an IP', 'PATCH', source, json({ ipFilterMode: 'denylist', ipDenylist: ['192.0.2.1', 'not-an-ip'] }), 'ipDenylist[1]'),
  invalid('an IPv6 CIDR with prefix 129', 'POST', sources, newSource({ ipDenylist: ['2001:db8::/129'] }), 'ipDenylist[0]'),
  invalid('allowlist mode with an empty allowlist', 'PATCH', source, json({ ipFilterMode: 'allowlist' }), 'ipAllowlist'),

  // Slugs (INVALID_SLUG wins over VALIDATION_ERROR).
  ...['Uppercase', 'has space', '-leading', 'trailing-', 'a--b', 'under_score', ''].map((slug) => ({
    title: `the source slug ${JSON.stringify(slug)}`,
    method: 'POST',
    path: sources,
    options: newSource({ slug }),
    status: 400,
    code: 'INVALID_SLUG',
    field: 'slug',
  })),
  { title: 'the destination slug "Bad Slug"', method: 'POST', path: destinations, options: newDestination({ slug: 'Bad Slug' }), status: 400, code: 'INVALID_SLUG', field: 'slug' },
  invalid('a source without a slug', 'POST', sources, json({ name: 'No slug' }), 'slug'),

  // URLs (INVALID_URL wins over VALIDATION_ERROR).
  ...[
    ['an ftp:// URL', 'ftp://files.example.com/hook'],
    ['a URL without a scheme', 'example.com/hook'],
    ['a URL with credentials', 'https://user:secret@example.com/hook'],
    ['a javascript: URL', 'javascript:alert(1)'],
    ['a relative URL', '/hook'],
  ].flatMap(([what, url]) => [
    { title: `${what} on create`, method: 'POST', path: destinations, options: newDestination({ url }), status: 400, code: 'INVALID_URL', field: 'url' },
    { title: `${what} on patch`, method: 'PATCH', path: destination, options: json({ url }), status: 400, code: 'INVALID_URL', field: 'url' },
  ]),
  invalid('a destination without a url', 'POST', destinations, json({ name: 'No url' }), 'url'),

  // authConfig against authType.
  invalid('basic auth given a token', 'POST', destinations, newDestination({ authType: 'basic', authConfig: { token: 'x' } }), 'authConfig.token'),
  invalid('bearer auth with no authConfig', 'POST', destinations, newDestination({ authType: 'bearer' }), 'authConfig.token'),
  invalid('no auth given credentials', 'POST', destinations, newDestination({ authType: 'none', authConfig: { token: 'x' } }), 'authConfig.token'),
  invalid('api_key auth without headerName', 'PATCH', destination, json({ authType: 'api_key', authConfig: { key: 'k' } }), 'authConfig.headerName'),
  invalid('an unknown authType', 'POST', destinations, newDestination({ authType: 'oauth', authConfig: {} }), 'authType'),
  invalid('a Host header', 'PATCH', destination, json({ headers: { Host: 'evil.example.com' } }), 'headers'),
  invalid('a maskFields filter expression', 'POST', sources, newSource({ maskFields: ['$.ok', '$[?('] }), 'maskFields[1]'),
  invalid('an encryptFields script expression', 'PATCH', source, json({ encryptFields: ['$[(@.length-1)]'] }), 'encryptFields[0]'),
  invalid('an encryptFields slice', 'PATCH', source, json({ encryptFields: ['$.items[0:2]'] }), 'encryptFields[0]'),
  invalid('a maskFields path with 30 recursive descents (issue 53)', 'POST', sources, newSource({ maskFields: [`$${'..*'.repeat(30)}`] }), 'maskFields[0]'),
  invalid('a maskFields path with 3 recursive descents', 'PATCH', source, json({ maskFields: ['$..a', '$..a..b..c'] }), 'maskFields[1]'),
  invalid('an encryptFields path with 33 selectors', 'POST', sources, newSource({ encryptFields: [`$${'.a'.repeat(33)}`] }), 'encryptFields[0]'),
  invalid('a body nested 3,000 deep', 'POST', sources, raw('{"a":'.repeat(3000) + '1' + '}'.repeat(3000), 'application/json'), '(body)'),
  invalid('a test payload nested 3,000 deep', 'POST', (f) => `/api/destinations/${f.destination}/test`, raw(`{"payload":${'['.repeat(3000)}${']'.repeat(3000)}}`, 'application/json'), '(body)'),
  invalid('an Expect header', 'PATCH', destination, json({ headers: { Expect: '100-continue' } }), 'headers'),
  invalid('Host as the api_key header', 'PATCH', destination, json({ authType: 'api_key', authConfig: { headerName: 'Host', key: 'k' } }), 'authConfig.headerName'),
  invalid('Transfer-Encoding as the custom header', 'PATCH', destination, json({ authType: 'custom_header', authConfig: { headerName: 'Transfer-Encoding', headerValue: 'chunked' } }), 'authConfig.headerName'),
  invalid('Content-Length as a new destination\'s auth header', 'POST', destinations, newDestination({ authType: 'api_key', authConfig: { headerName: 'content-length', key: 'k' } }), 'authConfig.headerName'),
  invalid('a control character in a header value', 'PATCH', destination, json({ headers: { 'X-Bell': 'a\u0007b' } }), 'headers.X-Bell'),
  invalid('a character beyond Latin-1 in a header value', 'PATCH', destination, json({ headers: { 'X-Price': '5 \u20ac' } }), 'headers.X-Price'),
  invalid('a DEL character in a custom header value', 'PATCH', destination, json({ authType: 'custom_header', authConfig: { headerName: 'X-Auth', headerValue: 'v\u007f' } }), 'authConfig.headerValue'),
  invalid('a line break in a bearer token', 'PATCH', destination, json({ authType: 'bearer', authConfig: { token: 'abc\ndef' } }), 'authConfig.token'),

  // Query values.
  invalid('enabled=yes on sources', 'GET', () => '/api/sources?enabled=yes', {}, 'enabled'),
  invalid('enabled=1 on destinations', 'GET', () => '/api/destinations?enabled=1', {}, 'enabled'),
  invalid('a 201-character search', 'GET', () => `/api/sources?search=${'s'.repeat(201)}`, {}, 'search'),

  // Paths and methods.
  { title: 'an unknown route under /api', method: 'GET', path: () => '/api/widgets', status: 404, code: 'NOT_FOUND' },
  { title: 'an unknown sub-resource', method: 'GET', path: (f) => `/api/sources/${f.source}/widgets`, status: 404, code: 'NOT_FOUND' },
  { title: 'an unknown route outside /api', method: 'GET', path: () => '/nowhere', status: 404, code: 'NOT_FOUND' },
  { title: 'PUT on a source', method: 'PUT', path: source, options: json({ name: 'x' }), status: 405, code: 'METHOD_NOT_ALLOWED' },
  { title: 'DELETE on the source collection', method: 'DELETE', path: sources, status: 405, code: 'METHOD_NOT_ALLOWED' },
  { title: 'POST on a destination', method: 'POST', path: destination, options: json({}), status: 405, code: 'METHOD_NOT_ALLOWED' },
  { title: 'GET on rotate-secret', method: 'GET', path: (f) => `/api/sources/${f.source}/rotate-secret`, status: 405, code: 'METHOD_NOT_ALLOWED' },
  { title: 'DELETE on signing-secret', method: 'DELETE', path: (f) => `/api/destinations/${f.destination}/signing-secret`, status: 405, code: 'METHOD_NOT_ALLOWED' },
  { title: 'TRACE on a source', method: 'TRACE', path: source, status: 405, code: 'METHOD_NOT_ALLOWED' },
  { title: 'PROPFIND on the destination collection', method: 'PROPFIND', path: destinations, status: 405, code: 'METHOD_NOT_ALLOWED' },
  { title: 'PUT on a route', method: 'PUT', path: (f) => `/api/routes/${f.route}`, options: json({ enabled: false }), status: 405, code: 'METHOD_NOT_ALLOWED' },
];

/** Paths whose percent-encoding is broken: refused as the client's fault (4xx), never a 500. */
const BROKEN_PATHS: [string, string][] = [
  ['GET', '/api/sources/%E0%A4%A'],
  ['PATCH', '/api/sources/%E0%A4%A'],
  ['DELETE', '/api/destinations/%ZZ'],
  ['POST', '/api/sources/%C0%AF/rotate-secret'],
  ['GET', '/api/routes/%'],
];

describeEachStore('Bad input', (target) => {
  let h: ApiHarness;
  let fixture: Fixture;

  /** Everything a bad request might have changed. */
  async function state() {
    return {
      source: (await h.api('GET', `/api/sources/${fixture.source}`)).body,
      destination: (await h.api('GET', `/api/destinations/${fixture.destination}`)).body,
      route: (await h.api('GET', `/api/routes/${fixture.route}`)).body,
      sources: (await h.api('GET', '/api/sources?pageSize=100')).body,
      destinations: (await h.api('GET', '/api/destinations?pageSize=100')).body,
      routes: (await h.api('GET', '/api/routes?pageSize=100')).body,
      signingSecret: (await h.api('GET', `/api/destinations/${fixture.destination}/signing-secret`)).body,
    };
  }

  before(async function () {
    h = await startApiHarness(this, target);
    const created = async (path: string, body: unknown) => (await h.api('POST', path, { body })).body.id as string;
    const sourceId = await created('/api/sources', { name: 'Fixture', slug: 'fixture', provider: 'codehost' });
    const destinationId = await created('/api/destinations', {
      name: 'Fixture',
      url: 'https://fixture.example.com',
      authType: 'basic',
      authConfig: { username: 'u', password: 'fixture-password-1234' },
    });
    fixture = { source: sourceId, destination: destinationId, route: await created('/api/routes', { sourceId, destinationId }) };
  });

  after(async () => {
    await h?.stop();
  });

  for (const c of CASES) {
    it(`${c.method} with ${c.title} answers ${c.status} ${c.code} and changes nothing`, async () => {
      const stateBefore = await state();
      const path = c.path(fixture);
      const response = await h.api(c.method, path, c.options);
      expect(response.status, response.text).to.equal(c.status);
      expect(response.body).to.include({ code: c.code });
      expect(response.body.error).to.be.a('string').and.not.equal('');
      expect(response.body.message).to.be.a('string').and.not.equal('');
      if (c.field !== undefined) {
        expect(response.body.details, response.text).to.be.an('array');
        for (const detail of response.body.details) expect(Object.keys(detail)).to.have.members(['field', 'message']);
        expect(response.body.details.map((d: { field: string }) => d.field), response.text).to.include(c.field);
      }
      expect(await state()).to.deep.equal(stateBefore);
    });
  }

  for (const [method, path] of BROKEN_PATHS) {
    it(`${method} ${path} (broken percent-encoding) answers a 4xx error envelope and changes nothing`, async () => {
      const stateBefore = await state();
      const response = await h.api(method, path);
      expect(response.status).to.be.within(400, 499);
      expect(Object.keys(response.body)).to.include.members(['error', 'message', 'code']);
      expect(await state()).to.deep.equal(stateBefore);
    });
  }

  /** Every list endpoint: a GET whose query takes `page`. */
  const LIST_PATHS = API_OPERATIONS.filter((op) => op.method === 'get' && op.query instanceof z.ZodObject && 'page' in op.query.shape).map((op) => op.path);

  it('finds the list endpoints to check', () => {
    expect(LIST_PATHS).to.include.members(['/api/sources', '/api/destinations', '/api/routes', '/api/events', '/api/replays', '/api/keys']);
  });

  for (const path of LIST_PATHS) {
    it(`GET ${path} answers 400 VALIDATION_ERROR naming an unknown query parameter, and still takes page and pageSize`, async () => {
      const refused = await h.api('GET', `${path}?page=1&pageSize=5&colour=red&sourceid=src_1`);
      expect(refused.status, refused.text).to.equal(400);
      expect(refused.body.code).to.equal('VALIDATION_ERROR');
      expect(refused.body.message).to.include('colour').and.include('sourceid');
      expect(refused.body.details).to.deep.equal([
        { field: 'colour', message: 'Unknown query parameter' },
        { field: 'sourceid', message: 'Unknown query parameter' },
      ]);
      const taken = await h.api('GET', `${path}?page=1&pageSize=5`);
      expect(taken.status, taken.text).to.equal(200);
      expect(taken.body.pagination).to.include({ page: 1, pageSize: 5 });
    });
  }

  it('a VALIDATION_ERROR lists every field at fault, not only the first', async () => {
    const response = await h.api('POST', '/api/destinations', { body: { name: '', url: 'https://ok.example.com', timeoutMs: 1, method: 'GET', extra: 1 } });
    expect(response.status).to.equal(400);
    expect(response.body.details.map((d: { field: string }) => d.field)).to.include.members(['name', 'timeoutMs', 'method', 'extra']);
  });
});
