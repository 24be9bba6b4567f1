import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

/** What a response check needs of an answer. */
export interface CheckedResponse {
  status: number;
  contentType: string;
  /** Parsed JSON, or the text for other bodies. */
  body: unknown;
  text: string;
}

interface DocumentedResponse {
  $ref?: string;
  content?: Record<string, unknown>;
}

interface Documented {
  paths?: Record<string, Record<string, { responses?: Record<string, DocumentedResponse> }>>;
}

interface PathTemplate {
  template: string;
  pattern: RegExp;
  params: number;
}

// ajv-formats is CommonJS; its plugin function is also its `default` export.
const addFormats = (addFormatsModule as unknown as { default: (ajv: Ajv2020) => Ajv2020 }).default;

const DOCUMENT_ID = 'openapi.json';
const pointer = (segments: string[]) => segments.map((s) => s.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
const segmentsOf = (ref: string) => ref.replace(/^#\//, '').split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));

function templates(document: Documented): PathTemplate[] {
  return Object.keys(document.paths ?? {})
    .map((template) => {
      const source = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+');
      return { template, pattern: new RegExp(`^${source}$`), params: (template.match(/\{/g) ?? []).length };
    })
    .sort((a, b) => a.params - b.params);
}

/**
 * Checks answers against an OpenAPI 3.1 document: the status must be one the operation documents and a
 * JSON body must satisfy its schema (JSON Schema 2020-12, validated by Ajv). Returns the problems, each
 * naming the request, the documented path and the field at fault; none when the answer fits.
 */
export function createResponseChecker(openApi: object) {
  const document = openApi as Documented;
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  ajv.addSchema(document as object, DOCUMENT_ID);
  const paths = templates(document);
  const compiled = new Map<string, ValidateFunction>();
  const validator = (ref: string) => {
    let validate = compiled.get(ref);
    if (!validate) {
      validate = ajv.getSchema(ref);
      if (!validate) throw new Error(`no schema at ${ref}`);
      compiled.set(ref, validate);
    }
    return validate;
  };
  const errorEnvelope = `${DOCUMENT_ID}#/components/schemas/Error`;

  function schemaProblems(ref: string, body: unknown, where: string): string[] {
    const validate = validator(ref);
    if (validate(body)) return [];
    return (validate.errors ?? []).map((error) => {
      const field = error.instancePath === '' ? '(body)' : error.instancePath;
      const extra = error.keyword === 'additionalProperties' ? ` (${(error.params as { additionalProperty: string }).additionalProperty})` : '';
      return `${where}: ${field} ${error.message}${extra}`;
    });
  }

  return function check(method: string, url: string, response: CheckedResponse): string[] {
    const path = url.split('?')[0]!;
    const where = `${method} ${path} answered ${response.status}`;
    const match = paths.find((candidate) => candidate.pattern.test(path));
    const operation = match ? document.paths![match.template]![method.toLowerCase()] : undefined;
    if (!match || !operation) {
      // No such route or method: the router's own 404 NOT_FOUND / 405 METHOD_NOT_ALLOWED, in the error envelope.
      if (response.status === 404 || response.status === 405) return schemaProblems(errorEnvelope, response.body, where);
      return [`${where}, but the document has no ${method} ${match?.template ?? path}`];
    }
    let location = ['paths', match.template, method.toLowerCase(), 'responses', String(response.status)];
    let documented = operation.responses?.[String(response.status)];
    if (!documented) return [`${where}, a status the document does not list for ${method} ${match.template}`];
    // Shared responses (the error ones) are references to components.
    while (documented.$ref) {
      location = segmentsOf(documented.$ref);
      documented = location.reduce<any>((node, segment) => node?.[segment], document) as DocumentedResponse;
    }
    const described = `${where} (${method} ${match.template})`;
    const types = Object.keys(documented.content ?? {});
    if (types.length === 0) return response.text === '' ? [] : [`${described}: a body where the document has none`];
    const type = response.contentType.split(';')[0]!.trim().toLowerCase();
    // An exact media type, else a range (`text/*`, `*/*`) the document gives.
    const documentedType = [type, `${type.split('/')[0]}/*`, '*/*'].find((candidate) => types.includes(candidate));
    if (!documentedType) return [`${described}: content type "${type}" is not one of ${types.join(', ')}`];
    if (documentedType !== 'application/json') return [];
    const ref = `${DOCUMENT_ID}#/${pointer([...location, 'content', documentedType, 'schema'])}`;
    return schemaProblems(ref, response.body, described);
  };
}

export type ResponseChecker = ReturnType<typeof createResponseChecker>;
