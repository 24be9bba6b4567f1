import { CheckField, Fieldset, lines, optionalNumber, SelectField, TextField } from '../parts/fields.js';
import { SettingsForm, useFormValues } from '../parts/settings-form.js';

const PROVIDERS = ['', 'codehost', 'payments', 'commerce', 'chat', 'telecom', 'custom', 'generic'] as const;
const VERIFICATION_TYPES = ['none', 'codehost', 'payments', 'chat', 'commerce', 'telecom', 'standard', 'hmac'] as const;
const TIMESTAMPED = ['payments', 'chat', 'standard'];

/** The source as the API returns it (get and create). */
export interface Source {
  id: string;
  name: string;
  slug: string;
  description?: string | null;
  provider?: string | null;
  webhookUrl: string;
  verificationConfig?: { type: string; secret?: string; toleranceSeconds?: number; algorithm?: string; header?: string; encoding?: string; prefix?: string };
  rejectInvalidSignatures?: boolean;
  rateLimitPerMinute?: number | null;
  ipFilterMode?: string;
  ipAllowlist?: string[];
  ipDenylist?: string[];
  encryptFields?: string[];
  maskFields?: string[];
  dedupEnabled?: boolean;
  dedupStrategy?: string;
  dedupWindowHours?: number;
  dedupCustomHeader?: string | null;
  enabled: boolean;
  eventsCount?: number;
  lastEventAt?: string | null;
}

/** Every editable field as the form holds it (text while typed, so nothing is lost on an error). */
function formValues(source?: Source) {
  const verification = source?.verificationConfig;
  return {
    name: source?.name ?? '',
    slug: source?.slug ?? '',
    description: source?.description ?? '',
    provider: source?.provider ?? '',
    verificationType: verification?.type ?? 'none',
    // A masked secret sent back unchanged means "keep it".
    secret: verification?.secret ?? '',
    toleranceSeconds: String(verification?.toleranceSeconds ?? 300),
    algorithm: verification?.algorithm ?? 'sha256',
    header: verification?.header ?? '',
    encoding: verification?.encoding ?? 'hex',
    prefix: verification?.prefix ?? '',
    rejectInvalidSignatures: source?.rejectInvalidSignatures ?? false,
    rateLimitPerMinute: source?.rateLimitPerMinute?.toString() ?? '',
    ipFilterMode: source?.ipFilterMode ?? 'none',
    ipAllowlist: (source?.ipAllowlist ?? []).join('\n'),
    ipDenylist: (source?.ipDenylist ?? []).join('\n'),
    encryptFields: (source?.encryptFields ?? []).join('\n'),
    maskFields: (source?.maskFields ?? []).join('\n'),
    dedupEnabled: source?.dedupEnabled ?? false,
    dedupStrategy: source?.dedupStrategy ?? 'auto',
    dedupWindowHours: String(source?.dedupWindowHours ?? 24),
    dedupCustomHeader: source?.dedupCustomHeader ?? '',
    enabled: source?.enabled ?? true,
  };
}

type Values = ReturnType<typeof formValues>;

function verificationConfig(v: Values) {
  if (v.verificationType === 'none') return { type: 'none' };
  const secret = v.secret.trim() === '' ? {} : { secret: v.secret.trim() };
  if (v.verificationType === 'hmac') {
    return { type: 'hmac', ...secret, algorithm: v.algorithm, header: v.header.trim(), encoding: v.encoding, ...(v.prefix ? { prefix: v.prefix } : {}) };
  }
  return { type: v.verificationType, ...secret, ...(TIMESTAMPED.includes(v.verificationType) ? { toleranceSeconds: Number(v.toleranceSeconds) } : {}) };
}

/** The request body; the slug only on create (it is part of the webhook URL and never changes). */
function requestBody(v: Values, creating: boolean) {
  return {
    name: v.name,
    ...(creating ? { slug: v.slug.trim() } : {}),
    description: v.description === '' ? null : v.description,
    provider: v.provider === '' ? null : v.provider,
    verificationConfig: verificationConfig(v),
    rejectInvalidSignatures: v.rejectInvalidSignatures,
    rateLimitPerMinute: optionalNumber(v.rateLimitPerMinute),
    ipFilterMode: v.ipFilterMode,
    ipAllowlist: lines(v.ipAllowlist),
    ipDenylist: lines(v.ipDenylist),
    encryptFields: lines(v.encryptFields),
    maskFields: lines(v.maskFields),
    dedupEnabled: v.dedupEnabled,
    dedupStrategy: v.dedupStrategy,
    dedupWindowHours: Number(v.dedupWindowHours),
    dedupCustomHeader: v.dedupCustomHeader.trim() === '' ? null : v.dedupCustomHeader.trim(),
    enabled: v.enabled,
  };
}

export function SourceForm(props: { source?: Source; submitLabel: string; busy: boolean; readOnly: boolean; onSubmit(body: object): void }) {
  const creating = !props.source;
  const { values: v, set } = useFormValues(() => formValues(props.source));
  return (
    <SettingsForm submitLabel={props.submitLabel} busy={props.busy} readOnly={props.readOnly} onSubmit={() => props.onSubmit(requestBody(v, creating))}>
      <TextField label="Name" value={v.name} onInput={set('name')} required />
      {creating ? (
        <TextField label="Slug" value={v.slug} onInput={set('slug')} required hint="Lowercase letters, digits and hyphens; part of the webhook URL, fixed once created." />
      ) : (
        <p>
          Slug <code>{v.slug}</code> (fixed: it is part of the webhook URL)
        </p>
      )}
      <TextField label="Description" value={v.description} onInput={set('description')} />
      <SelectField label="Provider" value={v.provider} options={PROVIDERS.map((p) => ({ value: p, label: p || '(none)' }))} onChange={set('provider')} />
      <CheckField label="Enabled" checked={v.enabled} onChange={set('enabled')} />
      <Fieldset legend="Signature verification">
        <SelectField label="Verification type" value={v.verificationType} options={VERIFICATION_TYPES} onChange={set('verificationType')} />
        {v.verificationType !== 'none' && (
          <TextField label="Signing secret" value={v.secret} onInput={set('secret')} hint={creating ? 'Leave empty to have one generated.' : 'Shown masked; leave it to keep the current secret.'} />
        )}
        {TIMESTAMPED.includes(v.verificationType) && <TextField label="Timestamp tolerance (seconds)" type="number" value={v.toleranceSeconds} onInput={set('toleranceSeconds')} />}
        {v.verificationType === 'hmac' && (
          <>
            <TextField label="Signature header" value={v.header} onInput={set('header')} required />
            <SelectField label="Algorithm" value={v.algorithm} options={['sha1', 'sha256', 'sha512']} onChange={set('algorithm')} />
            <SelectField label="Encoding" value={v.encoding} options={['hex', 'base64', 'base64url']} onChange={set('encoding')} />
            <TextField label="Signature prefix" value={v.prefix} onInput={set('prefix')} placeholder="sha256=" />
          </>
        )}
        <CheckField label="Reject invalid signatures" checked={v.rejectInvalidSignatures} onChange={set('rejectInvalidSignatures')} />
      </Fieldset>
      <Fieldset legend="IP filter and rate limit">
        <SelectField label="IP filter mode" value={v.ipFilterMode} options={['none', 'allowlist', 'denylist']} onChange={set('ipFilterMode')} />
        <TextField label="IP allowlist (one address or CIDR per line)" rows={3} value={v.ipAllowlist} onInput={set('ipAllowlist')} />
        <TextField label="IP denylist (one address or CIDR per line)" rows={3} value={v.ipDenylist} onInput={set('ipDenylist')} />
        <TextField label="Rate limit per minute" type="number" value={v.rateLimitPerMinute} onInput={set('rateLimitPerMinute')} hint="Empty: unlimited." />
      </Fieldset>
      <Fieldset legend="Deduplication">
        <CheckField label="Deduplicate" checked={v.dedupEnabled} onChange={set('dedupEnabled')} />
        <SelectField label="Dedup strategy" value={v.dedupStrategy} options={['auto', 'provider_id', 'payload_hash', 'idempotency_key', 'none']} onChange={set('dedupStrategy')} />
        <TextField label="Dedup window (hours)" type="number" value={v.dedupWindowHours} onInput={set('dedupWindowHours')} />
        <TextField label="Idempotency header" value={v.dedupCustomHeader} onInput={set('dedupCustomHeader')} />
      </Fieldset>
      <Fieldset legend="Payload protection">
        <TextField label="Encrypt fields (one JSONPath per line)" rows={3} value={v.encryptFields} onInput={set('encryptFields')} placeholder="$.card.number" />
        <TextField label="Mask fields (one JSONPath per line)" rows={3} value={v.maskFields} onInput={set('maskFields')} placeholder="$.customer.email" />
      </Fieldset>
    </SettingsForm>
  );
}
