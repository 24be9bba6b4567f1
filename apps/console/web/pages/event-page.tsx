import { TableHead } from '../parts/table-head.js';
import { useConsole } from '../parts/console-context.js';
import { ErrorMessage } from '../parts/error-message.js';
import { json, ms, when } from '../parts/format.js';
import { useAction } from '../parts/use-action.js';
import { useLoad } from '../parts/use-load.js';
import { href } from '../route.js';
import { AttemptTimeline, type Timeline } from './attempt-timeline.js';

interface EventPayload {
  payload: unknown;
  payloadEncoding?: string;
  payloadExpired?: boolean;
}

interface EventDetail {
  id: string;
  sourceId: string;
  source?: { id: string; name: string };
  status: string;
  headers: Record<string, string>;
  payloadSize: number;
  payloadHash: string;
  signatureValid: boolean;
  receivedAt: string;
  traceId?: string | null;
  deliveries?: { id: string; destinationId: string; destinationName?: string; status: string; attemptCount: number; latency: number | null; statusCode?: number | null; error?: string; deliveredAt: string | null }[];
}

/** The relay's RELAY_TRACE_URL_TEMPLATE, served beside the console's files. */
async function traceUrlTemplate(): Promise<string | null> {
  const answer = await fetch('/console/settings.json');
  if (!answer.ok) return null;
  return ((await answer.json()) as { traceUrlTemplate: string | null }).traceUrlTemplate;
}

function TraceLink({ traceId, template }: { traceId: string; template: string | null | undefined }) {
  if (!template) return <code>{traceId}</code>;
  return (
    <a href={template.replaceAll('{traceId}', encodeURIComponent(traceId))} target="_blank" rel="noreferrer">
      <code>{traceId}</code>
    </a>
  );
}

function PayloadText({ payload }: { payload: EventPayload }) {
  const text = payload.payloadEncoding === 'base64' ? `(base64) ${String(payload.payload)}` : typeof payload.payload === 'string' ? payload.payload : json(payload.payload);
  return (
    <pre class="payload" tabIndex={0} aria-label="Payload">
      {text}
    </pre>
  );
}

export function EventPage({ id }: { id: string }) {
  const { api, canWrite } = useConsole();
  const event = useLoad(() => api.get<EventDetail>(`/events/${id}`, { includeDeliveries: true }), [id]);
  // Read apart, so a payload the API cannot show (expired, unreadable) costs only its own panel.
  const payload = useLoad(() => api.get<EventPayload>(`/events/${id}`, { includePayload: true }), [id]);
  const timeline = useLoad(() => api.get<Timeline>(`/events/${id}/timeline`), [id]);
  const traceTemplate = useLoad(traceUrlTemplate, []);
  const refresh = () => {
    event.reload();
    timeline.reload();
  };
  const replay = useAction(async () => {
    const answer = await api.send<{ message: string; deliveriesCreated: number }>('POST', `/events/${id}/replay`);
    refresh();
    return answer;
  });
  const current = event.data;
  return (
    <section>
      <p>
        <a href={href('/events')}>Events</a> /
      </p>
      <h1>
        Event <code>{id}</code>
      </h1>
      <ErrorMessage error={event.error} />
      {current && (
        <>
          <dl class="facts">
            <div>
              <dt>Status</dt>
              <dd>
                <span class={`status status-${current.status}`}>{current.status}</span>
              </dd>
            </div>
            <div>
              <dt>Source</dt>
              <dd>
                <a href={href(`/sources/${current.sourceId}`)}>{current.source?.name ?? current.sourceId}</a>
              </dd>
            </div>
            <div>
              <dt>Received</dt>
              <dd>{when(current.receivedAt)}</dd>
            </div>
            {current.traceId && (
              <div>
                <dt>Trace</dt>
                <dd>
                  <TraceLink traceId={current.traceId} template={traceTemplate.data} />
                </dd>
              </div>
            )}
            <div>
              <dt>Signature</dt>
              <dd>{current.signatureValid ? 'valid' : 'invalid'}</dd>
            </div>
            <div>
              <dt>Size</dt>
              <dd>
                {current.payloadSize} B <small>{current.payloadHash}</small>
              </dd>
            </div>
          </dl>
          <p class="actions">
            {canWrite && (
              <button type="button" onClick={() => replay.run()} disabled={replay.busy}>
                Replay
              </button>
            )}
            <button type="button" class="quiet" onClick={refresh}>
              Refresh
            </button>
          </p>
          <ErrorMessage error={replay.error} />
          {replay.result && <p role="status">{`${replay.result.message} (${replay.result.deliveriesCreated} new deliveries)`}</p>}
        </>
      )}
      <div class="panel">
        <h2>Timeline</h2>
        <ErrorMessage error={timeline.error} />
        {timeline.data && <AttemptTimeline timeline={timeline.data} />}
      </div>
      {current && (
        <>
          <div class="panel">
            <h2>Deliveries</h2>
            <table>
              <TableHead caption="Deliveries" columns={['Delivery', 'Destination', 'Status', 'Attempts', 'Answer', 'Latency', 'Delivered']} />
              <tbody>
                {(current.deliveries ?? []).map((delivery) => (
                  <tr key={delivery.id} class="delivery">
                    <td>
                      <code>{delivery.id}</code>
                    </td>
                    <td>
                      <a href={href(`/destinations/${delivery.destinationId}`)}>{delivery.destinationName ?? delivery.destinationId}</a>
                    </td>
                    <td>
                      <span class={`status status-${delivery.status}`}>{delivery.status}</span>
                    </td>
                    <td>{delivery.attemptCount}</td>
                    <td>{delivery.error ?? delivery.statusCode ?? '—'}</td>
                    <td>{ms(delivery.latency)}</td>
                    <td>{when(delivery.deliveredAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div class="panel">
            <h2>Payload</h2>
            <ErrorMessage error={payload.error} />
            {payload.data?.payloadExpired && <p>The payload was deleted under the retention policy.</p>}
            {payload.data && !payload.data.payloadExpired && <PayloadText payload={payload.data} />}
          </div>
          <div class="panel">
            <h2>Headers</h2>
            <table>
              <caption class="sr-only">Headers</caption>
              <tbody>
                {Object.entries(current.headers).map(([name, value]) => (
                  <tr key={name}>
                    <th scope="row">{name}</th>
                    <td>
                      <code>{value}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
