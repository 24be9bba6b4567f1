import { CheckField, Fieldset, optionalNumber, SelectField, TextField } from '../parts/fields.js';
import { SettingsForm, useFormValues } from '../parts/settings-form.js';

export interface Destination {
  id: string;
  name: string;
  slug?: string;
  url: string;
  method?: string;
  description?: string | null;
  headers?: Record<string, string>;
  authType?: string;
  authConfig?: Record<string, string> | null;
  timeoutMs?: number;
  rateLimitPerMinute?: number | null;
  retryPolicy?: { maxRetries: number; initialDelay: number; maxDelay: number; backoffMultiplier: number };
  ordering?: 'none' | 'source';
  autoDisableAfterSeconds?: number | null;
  enabled: boolean;
  disabledReason?: string | null;
  successRate: number | null;
  avgLatency: number | null;
  deliveriesCount: number;
  lastDeliveryAt?: string | null;
  circuitState?: 'closed' | 'open' | 'half_open';
}

/** The authConfig fields of each authType (SPEC 2.3.1). */
const AUTH_FIELDS: Record<string, { name: string; label: string }[]> = {
  none: [],
  basic: [
    { name: 'username', label: 'Username' },
    { name: 'password', label: 'Password' },
  ],
  bearer: [{ name: 'token', label: 'Bearer token' }],
  api_key: [
    { name: 'headerName', label: 'Key header name' },
    { name: 'key', label: 'Key' },
  ],
  custom_header: [
    { name: 'headerName', label: 'Header name' },
    { name: 'headerValue', label: 'Header value' },
  ],
};

function formValues(destination?: Destination) {
  const retry = destination?.retryPolicy;
  return {
    name: destination?.name ?? '',
    url: destination?.url ?? '',
    method: destination?.method ?? 'POST',
    description: destination?.description ?? '',
    headers: Object.entries(destination?.headers ?? {})
      .map(([name, value]) => `${name}: ${value}`)
      .join('\n'),
    authType: destination?.authType ?? 'none',
    // Masked credentials sent back unchanged mean "keep them".
    auth: { ...(destination?.authConfig ?? {}) } as Record<string, string>,
    timeoutMs: String(destination?.timeoutMs ?? 30000),
    rateLimitPerMinute: destination?.rateLimitPerMinute?.toString() ?? '',
    maxRetries: String(retry?.maxRetries ?? 5),
    initialDelay: String(retry?.initialDelay ?? 1000),
    maxDelay: String(retry?.maxDelay ?? 60000),
    backoffMultiplier: String(retry?.backoffMultiplier ?? 2),
    ordering: destination?.ordering ?? 'none',
    // Empty: never; a new destination starts with the relay's default, three days.
    autoDisableAfterSeconds: destination ? (destination.autoDisableAfterSeconds?.toString() ?? '') : '259200',
    enabled: destination?.enabled ?? true,
  };
}

type Values = ReturnType<typeof formValues>;

/** `Name: value` per line; a line without a colon is sent as a name with an empty value, for the API to judge. */
function headerMap(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const colon = line.indexOf(':');
    headers[(colon < 0 ? line : line.slice(0, colon)).trim()] = colon < 0 ? '' : line.slice(colon + 1).trim();
  }
  return headers;
}

function requestBody(v: Values) {
  const fields = AUTH_FIELDS[v.authType] ?? [];
  return {
    name: v.name,
    url: v.url.trim(),
    method: v.method,
    description: v.description === '' ? null : v.description,
    headers: headerMap(v.headers),
    authType: v.authType,
    authConfig: Object.fromEntries(fields.map((field) => [field.name, v.auth[field.name] ?? ''])),
    timeoutMs: Number(v.timeoutMs),
    rateLimitPerMinute: optionalNumber(v.rateLimitPerMinute),
    retryPolicy: {
      maxRetries: Number(v.maxRetries),
      initialDelay: Number(v.initialDelay),
      maxDelay: Number(v.maxDelay),
      backoffMultiplier: Number(v.backoffMultiplier),
    },
    ordering: v.ordering,
    autoDisableAfterSeconds: optionalNumber(v.autoDisableAfterSeconds),
    enabled: v.enabled,
  };
}

export function DestinationForm(props: { destination?: Destination; submitLabel: string; busy: boolean; readOnly: boolean; onSubmit(body: object): void }) {
  const { values: v, setValues, set } = useFormValues(() => formValues(props.destination));
  const setAuth = (name: string) => (value: string) => setValues((current) => ({ ...current, auth: { ...current.auth, [name]: value } }));
  return (
    <SettingsForm submitLabel={props.submitLabel} busy={props.busy} readOnly={props.readOnly} onSubmit={() => props.onSubmit(requestBody(v))}>
      <TextField label="Name" value={v.name} onInput={set('name')} required />
      <TextField label="URL" type="url" value={v.url} onInput={set('url')} required placeholder="https://example.com/hooks" />
      <SelectField label="Method" value={v.method} options={['POST', 'PUT', 'PATCH']} onChange={set('method')} />
      <TextField label="Description" value={v.description} onInput={set('description')} />
      <CheckField label="Enabled" checked={v.enabled} onChange={set('enabled')} />
      <TextField label="Headers (one Name: value per line)" rows={3} value={v.headers} onInput={set('headers')} />
      <Fieldset legend="Authentication">
        <SelectField label="Authentication type" value={v.authType} options={Object.keys(AUTH_FIELDS)} onChange={set('authType')} />
        {(AUTH_FIELDS[v.authType] ?? []).map((field) => (
          <TextField key={field.name} label={field.label} value={v.auth[field.name] ?? ''} onInput={setAuth(field.name)} />
        ))}
      </Fieldset>
      <Fieldset legend="Delivery">
        <TextField label="Timeout (ms)" type="number" value={v.timeoutMs} onInput={set('timeoutMs')} />
        <TextField label="Rate limit per minute" type="number" value={v.rateLimitPerMinute} onInput={set('rateLimitPerMinute')} hint="Empty: unlimited." />
        <TextField label="Max retries" type="number" value={v.maxRetries} onInput={set('maxRetries')} />
        <TextField label="Initial retry delay (ms)" type="number" value={v.initialDelay} onInput={set('initialDelay')} />
        <TextField label="Max retry delay (ms)" type="number" value={v.maxDelay} onInput={set('maxDelay')} />
        <TextField label="Backoff multiplier" type="number" value={v.backoffMultiplier} onInput={set('backoffMultiplier')} />
        <SelectField
          label="Ordering"
          value={v.ordering}
          options={[
            { value: 'none', label: 'none: events in flight side by side' },
            { value: 'source', label: 'source: one at a time per source, in the order received' },
          ]}
          onChange={set('ordering')}
        />
        <TextField
          label="Auto-disable after (seconds of failing)"
          type="number"
          value={v.autoDisableAfterSeconds}
          onInput={set('autoDisableAfterSeconds')}
          hint="Disabled once every attempt has failed this long (at least 5 attempts), with a warning at half of it. Empty: never."
        />
      </Fieldset>
    </SettingsForm>
  );
}
