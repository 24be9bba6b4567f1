import { z } from 'zod';
import { ValidationError } from '../errors/errors.js';
import { parseInput } from '../http/validate.js';
import { isMaskedValue } from '../secrets/masked-value.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { DestinationRow } from '../store/entities/destination.js';
import { AUTH_CONFIG_SCHEMAS, AUTH_SECRET_FIELDS, type AuthType } from './destination-schema.js';

/**
 * A masked credential (a fetched destination sent back) stands for the current value of that field; with no
 * current value of the same authType to stand for, it is refused rather than stored as a credential.
 */
function unmaskCredentials(deps: { secrets: SecretBox }, authType: AuthType, authConfig: Record<string, unknown>, current?: DestinationRow) {
  const masked = AUTH_SECRET_FIELDS[authType].filter((field) => isMaskedValue(authConfig[field]));
  if (masked.length === 0) return authConfig;
  const currentConfig =
    current?.authType === authType && current.authConfigSealed !== null
      ? (JSON.parse(deps.secrets.open(current.authConfigSealed)) as Record<string, unknown>)
      : {};
  const unknown = masked.filter((field) => currentConfig[field] === undefined);
  if (unknown.length) {
    const details = unknown.map((field) => ({ field: `authConfig.${field}`, message: 'is a masked value; send the real credential' }));
    throw new ValidationError(`authConfig is invalid: ${details.map((d) => `${d.field} ${d.message}`).join('; ')}`, details);
  }
  return { ...authConfig, ...Object.fromEntries(masked.map((field) => [field, currentConfig[field]])) };
}

/** Validates authConfig against the effective authType and seals it; `none` carries no config. */
export function sealAuth(deps: { secrets: SecretBox }, authType: AuthType, authConfig: Record<string, unknown> | null | undefined, current?: DestinationRow): string | null {
  // Wrapped so that the details name `authConfig.<field>`, as for every other body field.
  const { authConfig: config } = parseInput(
    z.strictObject({ authConfig: AUTH_CONFIG_SCHEMAS[authType] }),
    { authConfig: unmaskCredentials(deps, authType, authConfig ?? {}, current) },
    `authConfig for authType ${authType}`,
  );
  return authType === 'none' ? null : deps.secrets.seal(JSON.stringify(config));
}
