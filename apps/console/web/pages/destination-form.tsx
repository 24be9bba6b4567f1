import { CheckField, Fieldset, optionalNumber, pairMap, pairText, SelectField, TextField } from '../parts/fields.js';
import { SettingsForm, useFormValues } from '../parts/settings-form.js';

export interface Destination {
  id: string;
  name: string;
  slug?: string;
  /** `http` (default) delivers to `url`; the queue types publish to `target`. */
  type?: string;
  url?: string;
  target?: Record<string, unknown>;
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

/** The target fields of each queue type (DESIGN 7); `http` has `url` instead. Kafka's brokers are comma-separated. */
const TARGET_FIELDS: Record<string, { name: string; label: string; placeholder?: string; kind?: 'boolean' | 'number' | 'list' }[]> = {
  http: [],
  rabbitmq: [
    { name: 'url', label: 'AMQP URL', placeholder: 'amqp://user:password@rabbitmq:5672/%2F' },
    { name: 'exchange', label: 'Exchange', placeholder: 'orders' },
    { name: 'routingKey', label: 'Routing key' },
  ],
  nats: [
    { name: 'url', label: 'NATS URL', placeholder: 'nats://nats:4222' },
    { name: 'subject', label: 'Subject', placeholder: 'orders.created' },
    { name: 'jetstream', label: 'JetStream (delivered on the stream acknowledgement)', kind: 'boolean' },
  ],
  kafka: [
    { name: 'brokers', label: 'Brokers (host:port, comma-separated)', placeholder: 'kafka-1:9092,kafka-2:9092', kind: 'list' },
    { name: 'topic', label: 'Topic', placeholder: 'orders' },
    { name: 'key', label: 'Message key: sourceId or eventId', placeholder: 'sourceId' },
    { name: 'ssl', label: 'TLS', kind: 'boolean' },
  ],
  redis: [
    { name: 'url', label: 'Redis URL', placeholder: 'redis://redis:6379' },
    { name: 'stream', label: 'Stream', placeholder: 'orders' },
    { name: 'maxLen', label: 'Approximate MAXLEN (empty: no trimming)', kind: 'number' },
  ],
};

/** The target as the form edits it: every field as text (masked credentials sent back keep the stored ones). */
function targetText(target: Record<string, unknown> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(target ?? {}).map(([name, value]) => [name, Array.isArray(value) ? value.join(',') : String(value)]));
}

/** The target the API takes, from the form's text; the API judges each field and names the one it refuses. */
function targetBody(type: string, text: Record<string, string>): Record<string, unknown> {
  const target: Record<string, unknown> = {};
  for (const field of TARGET_FIELDS[type] ?? []) {
    const value = (text[field.name] ?? '').trim();
    if (field.kind === 'boolean') target[field.name] = value === '' ? field.name === 'jetstream' : value === 'true';
    else if (field.kind === 'list') target[field.name] = value.split(',').map((item) => item.trim()).filter(Boolean);
    else if (field.kind === 'number') {
      if (value !== '') target[field.name] = Number(value);
    } else if (value !== '' || field.name !== 'key') target[field.name] = value;
  }
  return target;
}

function formValues(destination?: Destination) {
  const retry = destination?.retryPolicy;
  return {
    name: destination?.name ?? '',
    type: destination?.type ?? 'http',
    target: targetText(destination?.target),
    url: destination?.url ?? '',
    method: destination?.method ?? 'POST',
    description: destination?.description ?? '',
    headers: pairText(destination?.headers ?? {}, ':'),
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

function requestBody(v: Values) {
  const fields = AUTH_FIELDS[v.authType] ?? [];
  return {
    name: v.name,
    type: v.type,
    // `url` for http, `target` for the queue types: the API refuses the other.
    ...(v.type === 'http' ? { url: v.url.trim() } : { target: targetBody(v.type, v.target) }),
    method: v.method,
    description: v.description === '' ? null : v.description,
    headers: pairMap(v.headers, ':'),
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

/** Where the destination delivers: an HTTP URL and method, or the queue type's target fields. */
function TargetFields(props: { values: Values; set: ReturnType<typeof useFormValues<Values>>['set']; setTarget(name: string): (value: string) => void }) {
  const v = props.values;
  if (v.type === 'http') {
    return (
      <>
        <TextField label="URL" type="url" value={v.url} onInput={props.set('url')} required placeholder="https://example.com/hooks" />
        <SelectField label="Method" value={v.method} options={['POST', 'PUT', 'PATCH']} onChange={props.set('method')} />
      </>
    );
  }
  return (
    <Fieldset legend={`${v.type} target`}>
      {(TARGET_FIELDS[v.type] ?? []).map((field) =>
        field.kind === 'boolean' ? (
          <CheckField key={field.name} label={field.label} checked={(v.target[field.name] ?? String(field.name === 'jetstream')) === 'true'} onChange={(on: boolean) => props.setTarget(field.name)(String(on))} />
        ) : (
          <TextField key={field.name} label={field.label} value={v.target[field.name] ?? ''} onInput={props.setTarget(field.name)} placeholder={field.placeholder} />
        ),
      )}
    </Fieldset>
  );
}

export function DestinationForm(props: { destination?: Destination; submitLabel: string; busy: boolean; readOnly: boolean; onSubmit(body: object): void }) {
  const { values: v, setValues, set } = useFormValues(() => formValues(props.destination));
  const setAuth = (name: string) => (value: string) => setValues((current) => ({ ...current, auth: { ...current.auth, [name]: value } }));
  const setTarget = (name: string) => (value: string) => setValues((current) => ({ ...current, target: { ...current.target, [name]: value } }));
  return (
    <SettingsForm submitLabel={props.submitLabel} busy={props.busy} readOnly={props.readOnly} onSubmit={() => props.onSubmit(requestBody(v))}>
      <TextField label="Name" value={v.name} onInput={set('name')} required />
      <SelectField label="Type" value={v.type} options={Object.keys(TARGET_FIELDS)} onChange={set('type')} />
      <TargetFields values={v} set={set} setTarget={setTarget} />
      <TextField label="Description" value={v.description} onInput={set('description')} />
      <CheckField label="Enabled" checked={v.enabled} onChange={set('enabled')} />
      <TextField label="Headers (one Name: value per line)" rows={3} value={v.headers} onInput={set('headers')} />
      {v.type === 'http' && (
        <Fieldset legend="Authentication">
          <SelectField label="Authentication type" value={v.authType} options={Object.keys(AUTH_FIELDS)} onChange={set('authType')} />
          {(AUTH_FIELDS[v.authType] ?? []).map((field) => (
            <TextField key={field.name} label={field.label} value={v.auth[field.name] ?? ''} onInput={setAuth(field.name)} />
          ))}
        </Fieldset>
      )}
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
