import { z } from 'zod';

export const MAX_CODE_BYTES = 64 * 1024;
const MAX_ENV_VALUES = 32;

export const transformationCode = z
  .string()
  .min(1)
  .refine((code) => Buffer.byteLength(code) <= MAX_CODE_BYTES, { message: `must be at most ${MAX_CODE_BYTES} bytes` })
  .meta({ description: 'JavaScript defining `function transform(request, context)`; at most 64 KB', example: 'function transform(request) {\n  request.body.tag = "relayed";\n  return request;\n}' });

/** Every value is a secret: views mask it, and a masked value sent back keeps the stored one. */
export const transformationEnv = z
  .record(z.string().min(1).max(128), z.string().max(4096))
  .refine((env) => Object.keys(env).length <= MAX_ENV_VALUES, { message: `at most ${MAX_ENV_VALUES} values` })
  .meta({ description: 'String values passed as `context.env`; at most 32, secrets (masked in views)', example: { API_TOKEN: 'tok_live_1234' } });

export const transformationName = z.string().trim().min(1).max(200);
