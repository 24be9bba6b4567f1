import { useState } from 'preact/hooks';
import { useConsole } from '../parts/console-context.js';
import { CopyButton } from '../parts/copy-button.js';
import { ErrorMessage } from '../parts/error-message.js';
import { TextField } from '../parts/fields.js';
import { json, ms, percent, when } from '../parts/format.js';
import { useAction } from '../parts/use-action.js';
import { useLoad } from '../parts/use-load.js';
import { DeleteButton } from '../parts/delete-button.js';
import { href } from '../route.js';
import { DestinationActivity } from './destination-activity.js';
import { DestinationForm, type Destination } from './destination-form.js';
import { GraceRotation, type Rotated } from '../parts/grace-rotation.js';

interface Health {
  status: string;
  circuitState: string;
  successRate: number | null;
  avgLatency: number | null;
  p50Latency: number | null;
  p95Latency: number | null;
  p99Latency: number | null;
  totalDeliveries: number;
  successfulDeliveries: number;
  failedDeliveries: number;
  lastDeliveryAt: string | null;
  lastSuccessAt: string | null;
  lastFailureAt: string | null;
}

interface TestResult {
  success: boolean;
  statusCode: number;
  latency: number;
  responseBody?: string;
  error?: string;
  message: string;
}

const CIRCUIT_TEXT: Record<string, string> = { closed: 'closed', open: 'open: deliveries wait', half_open: 'half open: trying one delivery' };

function HealthPanel({ health }: { health: Health }) {
  const rows: [string, string][] = [
    ['Status', health.status],
    ['Circuit', CIRCUIT_TEXT[health.circuitState] ?? health.circuitState],
    ['Success rate', percent(health.successRate)],
    ['Attempts', `${health.totalDeliveries} (${health.successfulDeliveries} delivered, ${health.failedDeliveries} failed)`],
    ['Average latency', ms(health.avgLatency)],
    ['p50 latency', ms(health.p50Latency)],
    ['p95 latency', ms(health.p95Latency)],
    ['p99 latency', ms(health.p99Latency)],
    ['Last attempt', when(health.lastDeliveryAt)],
    ['Last success', when(health.lastSuccessAt)],
    ['Last failure', when(health.lastFailureAt)],
  ];
  return (
    <dl class="facts">
      {rows.map(([name, value]) => (
        <div key={name} data-fact={name}>
          <dt>{name}</dt>
          <dd class={name === 'Circuit' ? `circuit-${health.circuitState}` : undefined}>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function SendTest({ id }: { id: string }) {
  const { api } = useConsole();
  const [payload, setPayload] = useState('');
  const test = useAction(async (text: string) => {
    let body: object | undefined;
    if (text.trim() !== '') {
      try {
        body = { payload: JSON.parse(text) };
      } catch (error) {
        throw new Error(`The test payload is not JSON: ${(error as Error).message}`);
      }
    }
    return api.send<TestResult>('POST', `/destinations/${id}/test`, body);
  });
  return (
    <div class="panel form">
      <h2>Send test</h2>
      <TextField label="Test payload (JSON, empty for the sample event)" rows={3} value={payload} onInput={setPayload} />
      <button type="button" onClick={() => test.run(payload)} disabled={test.busy}>
        Send test
      </button>
      <ErrorMessage error={test.error} />
      {test.result && (
        <div role="status" class={test.result.success ? 'ok' : 'error'}>
          <p>
            {test.result.message} · status {test.result.statusCode} · {ms(test.result.latency)}
          </p>
          <pre>{test.result.success ? test.result.responseBody : test.result.error}</pre>
        </div>
      )}
    </div>
  );
}

function SigningSecret({ id }: { id: string }) {
  const { api } = useConsole();
  const reveal = useAction(() => api.get<{ secret: string }>(`/destinations/${id}/signing-secret`));
  const rotate = (graceSeconds: number) => api.send<Rotated>('POST', `/destinations/${id}/rotate-signing-secret`, { graceSeconds });
  return (
    <div class="panel">
      <h2>Signing secret</h2>
      <p>Every delivery is signed (Standard Webhooks) so the receiver can verify the relay.</p>
      <button type="button" onClick={() => reveal.run()} disabled={reveal.busy}>
        Show signing secret
      </button>
      <ErrorMessage error={reveal.error} />
      {reveal.result && (
        <p>
          <code>{reveal.result.secret}</code> <CopyButton text={reveal.result.secret} label="Copy signing secret" />
        </p>
      )}
      <GraceRotation label="Rotate signing secret" rotate={rotate} />
    </div>
  );
}

export function DestinationPage({ id }: { id: string }) {
  const { api, canWrite } = useConsole();
  const destination = useLoad(() => api.get<Destination>(`/destinations/${id}`), [id]);
  const health = useLoad(() => api.get<Health>(`/destinations/${id}/health`), [id]);
  const save = useAction((body: object) => api.send<Destination>('PATCH', `/destinations/${id}`, body));
  const current = destination.data;
  return (
    <section>
      <p>
        <a href={href('/destinations')}>Destinations</a> /
      </p>
      <h1>{current?.name ?? id}</h1>
      <ErrorMessage error={destination.error} />
      {current && !current.enabled && <p class="warning">Disabled{current.disabledReason ? ` (${current.disabledReason})` : ''}: its deliveries are held.</p>}
      <div class="panel">
        <h2>Health</h2>
        <button type="button" class="quiet" onClick={health.reload}>
          Refresh health
        </button>
        <ErrorMessage error={health.error} />
        {health.data && <HealthPanel health={health.data} />}
      </div>
      <DestinationActivity destinationId={id} />
      {canWrite && <SendTest id={id} />}
      {current && (
        <div class="panel">
          <h2>Settings</h2>
          <DestinationForm key={current.id} destination={current} submitLabel="Save destination" busy={save.busy} readOnly={!canWrite} onSubmit={save.run} />
          <ErrorMessage error={save.error} />
          {save.result && !save.busy && <p role="status">Saved.</p>}
          <details>
            <summary>As JSON</summary>
            <pre>{json(current)}</pre>
          </details>
        </div>
      )}
      {canWrite && <SigningSecret id={id} />}
      {canWrite && (
        <DeleteButton path={`/destinations/${id}`} back="/destinations" label="Delete destination" question="Delete this destination? Its routes go with it; delivery history is kept." />
      )}
    </section>
  );
}
