import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { expect } from 'chai';
import fs from 'node:fs';
import { createResponseChecker } from '../../../libs/testing/openapi-responses.js';
import { describeEachStore } from '../../../libs/testing/store-targets.js';
import { startApiHarness, type ApiHarness } from '../../../testing/api-harness.js';
import { API_OPERATIONS, openApiDocument } from '../api-operations.js';
import { ERROR_CODES } from './error-schema.js';
import { COMMITTED_DOCUMENT, documentText } from './write-document.js';

const addFormats = (addFormatsModule as unknown as { default: (ajv: Ajv2020) => Ajv2020 }).default;

type Json = Record<string, any>;
const METHODS = ['get', 'post', 'patch', 'delete', 'put'];

/** Every operation of the document with its path and method. */
function operations(document: Json): { path: string; method: string; operation: Json }[] {
  return Object.entries(document.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({ path, method, operation: operation as Json })),
  );
}

/** Every media type object (request bodies and responses, shared ones included) with where it is. */
function mediaTypes(document: Json): { where: string; pointer: string; media: Json }[] {
  const found: { where: string; pointer: string; media: Json }[] = [];
  const escape = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
  const collect = (content: Json | undefined, where: string, pointer: string) => {
    for (const [type, media] of Object.entries(content ?? {})) found.push({ where: `${where} ${type}`, pointer: `${pointer}/content/${escape(type)}`, media: media as Json });
  };
  for (const { path, method, operation } of operations(document)) {
    const base = `#/paths/${escape(path)}/${method}`;
    collect(operation.requestBody?.content, `${method.toUpperCase()} ${path} request`, `${base}/requestBody`);
    for (const [status, response] of Object.entries(operation.responses as Json)) {
      collect((response as Json).content, `${method.toUpperCase()} ${path} ${status}`, `${base}/responses/${status}`);
    }
  }
  for (const [name, response] of Object.entries((document.components?.responses ?? {}) as Json)) {
    collect((response as Json).content, `components.responses.${name}`, `#/components/responses/${name}`);
  }
  return found;
}

describe('OpenAPI document', () => {
  const document = openApiDocument() as Json;

  it('is a valid OpenAPI 3.1 document to an independent validator', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)).to.deep.equal([]);
    expect(result.valid).to.equal(true);
    expect(validator.version).to.equal('3.1');
  });

  it('is the one committed in docs/openapi.json (regenerate with `npm run openapi`)', () => {
    expect(fs.readFileSync(COMMITTED_DOCUMENT, 'utf8'), 'docs/openapi.json is stale: run `npm run openapi`').to.equal(documentText());
  });

  it('covers every endpoint of SPEC section 4, routes, filters, replays, keys, ingest and the probes, and not /metrics (served on its own port)', () => {
    const documented = operations(document).map(({ method, path }) => `${method.toUpperCase()} ${path}`);
    const expected = [
      ...['GET /api/sources', 'POST /api/sources', 'GET /api/sources/{id}', 'PATCH /api/sources/{id}', 'DELETE /api/sources/{id}'],
      ...['POST /api/sources/{id}/rotate-secret', 'GET /api/sources/export', 'POST /api/sources/import', 'DELETE /api/sources/bulk'],
      ...['GET /api/destinations', 'POST /api/destinations', 'GET /api/destinations/{id}', 'PATCH /api/destinations/{id}', 'DELETE /api/destinations/{id}'],
      ...['POST /api/destinations/{id}/test', 'GET /api/destinations/{id}/health', 'GET /api/destinations/export', 'POST /api/destinations/import'],
      ...['DELETE /api/destinations/bulk', 'GET /api/destinations/{id}/signing-secret', 'POST /api/destinations/{id}/rotate-signing-secret'],
      ...['GET /api/events', 'GET /api/events/{id}', 'GET /api/events/{id}/payload', 'GET /api/events/{id}/deliveries', 'GET /api/events/{id}/timeline'],
      ...['POST /api/events/{id}/replay', 'POST /api/events/bulk/replay', 'DELETE /api/events/{id}'],
      ...['GET /api/routes', 'POST /api/routes', 'GET /api/routes/{id}', 'PATCH /api/routes/{id}', 'DELETE /api/routes/{id}'],
      ...['GET /api/keys', 'POST /api/keys', 'DELETE /api/keys/{id}', 'GET /api/keys/current', 'GET /api/openapi.json'],
      ...['POST /api/filters/test', 'GET /api/replays', 'POST /api/replays', 'GET /api/replays/{id}', 'POST /api/replays/{id}/cancel'],
      ...['POST /ingest/{org}/{source}', 'GET /healthz', 'GET /readyz'],
    ];
    expect(documented).to.include.members(expected);
    expect(documented).not.to.include('GET /metrics');
  });

  it('documents every operation the API routes, with the bearer scheme and the scope it needs', () => {
    expect(document.components.securitySchemes.apiKey).to.deep.include({ type: 'http', scheme: 'bearer' });
    for (const routed of API_OPERATIONS) {
      const operation = document.paths[routed.path]?.[routed.method];
      expect(operation, `${routed.method} ${routed.path}`).to.be.an('object');
      expect(operation.security).to.deep.equal(routed.scope === 'public' ? [] : [{ apiKey: [routed.scope] }]);
    }
  });

  it('documents the error envelope with every code, and answers 401 and 403 on every authenticated operation', () => {
    expect(document.components.schemas.Error.properties.code.enum).to.have.members([...ERROR_CODES]);
    for (const { path, method, operation } of operations(document)) {
      if (operation.security?.length === 0) continue;
      expect(operation.responses, `${method} ${path}`).to.include.keys('401', '403');
    }
  });

  it('has an example for every request and response body, and each satisfies its schema', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(ajv);
    ajv.addSchema(document, 'doc');
    const all = mediaTypes(document);
    expect(all.length).to.be.above(50);
    for (const { where, pointer, media } of all) {
      expect(media, where).to.have.property('example');
      const validate = ajv.getSchema(`doc${pointer}/schema`)!;
      expect(validate(media.example), `${where}: ${ajv.errorsText(validate.errors)}`).to.equal(true);
    }
  });

  it('gives every operation a unique operationId, a summary and an example for each parameter', () => {
    const ids = operations(document).map(({ operation }) => operation.operationId);
    expect(new Set(ids).size).to.equal(ids.length);
    for (const { path, method, operation } of operations(document)) {
      expect(operation.summary, `${method} ${path}`).to.be.a('string').and.not.equal('');
      for (const parameter of (operation.parameters ?? []) as Json[]) {
        expect(parameter.schema.example ?? parameter.example, `${method} ${path} ${parameter.in} ${parameter.name}`).not.to.equal(undefined);
      }
    }
  });
});

describe('checking answers against the document', () => {
  const check = createResponseChecker(openApiDocument());
  const route = { id: 'rte_1', sourceId: 'src_1', destinationId: 'dst_1', enabled: true, filter: null, transformationId: null, delaySeconds: 0, createdAt: '2026-11-23T18:00:00.000Z' };

  it('accepts an answer that fits', () => {
    expect(check('GET', '/api/routes/rte_1', { status: 200, contentType: 'application/json', body: route, text: '' })).to.deep.equal([]);
  });

  it('names the path and the field of a body that does not fit', () => {
    const problems = check('GET', '/api/routes/rte_1?x=1', { status: 200, contentType: 'application/json', body: { ...route, enabled: 'yes' }, text: '' });
    expect(problems.join('\n')).to.include('GET /api/routes/rte_1 answered 200 (GET /api/routes/{id})').and.include('/enabled must be boolean');
  });

  it('refuses a field the document does not list, an undocumented status and an unknown error code', () => {
    const extra = check('GET', '/api/routes/rte_1', { status: 200, contentType: 'application/json', body: { ...route, priority: 1 }, text: '' });
    expect(extra.join('\n')).to.include('must NOT have additional properties (priority)');
    const status = check('GET', '/api/routes/rte_1', { status: 418, contentType: 'application/json', body: {}, text: '' });
    expect(status.join('\n')).to.include('answered 418, a status the document does not list for GET /api/routes/{id}');
    const code = check('GET', '/api/routes/rte_1', { status: 404, contentType: 'application/json', body: { error: 'Not Found', message: 'x', code: 'NO_SUCH_CODE' }, text: '' });
    expect(code.join('\n')).to.include('/code must be equal to one of the allowed values');
  });

  it('takes any content type where the document gives a range', () => {
    const answer = { status: 200, contentType: 'text/html', body: '<p>hi</p>', text: '<p>hi</p>' };
    expect(check('GET', '/api/events/evt_1/payload', answer)).to.deep.equal([]);
    expect(check('GET', '/api/routes/rte_1', { ...answer })[0]).to.include('content type "text/html" is not one of application/json');
  });

  it('checks the router\'s own 404 and 405 against the error envelope', () => {
    const body = { error: 'Not Found', message: 'No route for GET /api/nothing', code: 'NOT_FOUND' };
    expect(check('GET', '/api/nothing', { status: 404, contentType: 'application/json', body, text: '' })).to.deep.equal([]);
    expect(check('GET', '/api/nothing', { status: 200, contentType: 'application/json', body: {}, text: '' })[0]).to.include('the document has no GET');
  });
});

describeEachStore('GET /api/openapi.json', (target) => {
  let h: ApiHarness;

  before(async function () {
    h = await startApiHarness(this, target);
  });

  after(async () => {
    await h?.stop();
  });

  it('serves docs/openapi.json without a key', async () => {
    const response = await h.api('GET', '/api/openapi.json', { key: null });
    expect(response.status).to.equal(200);
    expect(response.headers['content-type']).to.match(/^application\/json/);
    expect(response.body).to.deep.equal(JSON.parse(fs.readFileSync(COMMITTED_DOCUMENT, 'utf8')));
  });
});
