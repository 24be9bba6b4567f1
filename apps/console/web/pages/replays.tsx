import { useEffect, useState } from 'preact/hooks';
import { ApiError, type Page } from '../api.js';
import { TableHead } from '../parts/table-head.js';
import { useConsole } from '../parts/console-context.js';
import { ErrorMessage } from '../parts/error-message.js';
import { EVENT_STATUS_OPTIONS, localToIso, SIGNATURE_OPTIONS } from '../parts/event-filter-options.js';
import { SelectField, TextField } from '../parts/fields.js';
import { when } from '../parts/format.js';
import { useAction } from '../parts/use-action.js';
import { useLoad } from '../parts/use-load.js';

/** DESIGN section 6 "Replay by query". */
interface ReplayJob {
  id: string;
  status: 'running' | 'completed' | 'cancelled' | 'failed';
  filter: Record<string, unknown>;
  matched: number;
  replayed: number;
  skipped: number;
  maxPerSecond: number;
  createdAt: string;
  finishedAt: string | null;
  /** Why a failed job stopped. */
  error: string | null;
}

const POLL_MS = 2000;

function replayRequest(draft: Record<string, string>, dryRun: boolean) {
  const filter: Record<string, unknown> = {};
  for (const name of ['sourceId', 'destinationId', 'status', 'search'] as const) if (draft[name]) filter[name] = draft[name];
  for (const name of ['from', 'to'] as const) if (draft[name]) filter[name] = localToIso(draft[name]);
  if (draft.signatureValid) filter.signatureValid = draft.signatureValid === 'true';
  const destinationIds = (draft.destinationIds ?? '')
    .split(/[\s,]+/)
    .filter((id) => id !== '');
  return { filter, ...(destinationIds.length > 0 ? { destinationIds } : {}), maxPerSecond: Number(draft.maxPerSecond), dryRun };
}

function NewReplay({ onStarted }: { onStarted(): void }) {
  const { api } = useConsole();
  const [draft, setDraft] = useState<Record<string, string>>({ maxPerSecond: '100' });
  const set = (name: string) => (value: string) => setDraft((current) => ({ ...current, [name]: value }));
  const dryRun = useAction(() => api.send<{ matched: number; sample: string[] }>('POST', '/replays', replayRequest(draft, true)));
  const start = useAction(async () => {
    const job = await api.send<ReplayJob>('POST', '/replays', replayRequest(draft, false));
    onStarted();
    return job;
  });
  return (
    <form class="panel form" onSubmit={(event) => event.preventDefault()}>
      <h2>New replay</h2>
      <TextField label="Source id" value={draft.sourceId ?? ''} onInput={set('sourceId')} placeholder="src_..." />
      <TextField label="Destination id (events with a delivery to it)" value={draft.destinationId ?? ''} onInput={set('destinationId')} placeholder="dst_..." />
      <SelectField label="Event status" value={draft.status ?? ''} options={EVENT_STATUS_OPTIONS} onChange={set('status')} />
      <TextField label="Received from" type="datetime-local" value={draft.from ?? ''} onInput={set('from')} />
      <TextField label="Received to" type="datetime-local" value={draft.to ?? ''} onInput={set('to')} />
      <TextField label="Search payload" value={draft.search ?? ''} onInput={set('search')} />
      <SelectField label="Signature" value={draft.signatureValid ?? ''} options={SIGNATURE_OPTIONS} onChange={set('signatureValid')} />
      <TextField label="Replay to destination ids (empty: the routed ones)" value={draft.destinationIds ?? ''} onInput={set('destinationIds')} />
      <TextField label="Events per second" type="number" value={draft.maxPerSecond ?? ''} onInput={set('maxPerSecond')} />
      <p class="actions">
        <button type="button" onClick={() => dryRun.run()} disabled={dryRun.busy}>
          Dry run
        </button>
        <button type="button" onClick={() => start.run()} disabled={start.busy}>
          Start replay
        </button>
      </p>
      <ErrorMessage error={dryRun.error} />
      <ErrorMessage error={start.error} />
      {dryRun.result && (
        <p role="status">
          Matching events: {dryRun.result.matched}; for example {dryRun.result.sample.join(', ') || 'none'}.
        </p>
      )}
    </form>
  );
}

export function ReplaysPage() {
  const { api, canWrite } = useConsole();
  const jobs = useLoad(() => api.get<Page<ReplayJob>>('/replays', { pageSize: 50 }), []);
  const cancel = useAction(async (id: string) => {
    await api.send('POST', `/replays/${id}/cancel`);
    jobs.reload();
  });
  const running = jobs.data?.data.some((job) => job.status === 'running') ?? false;
  useEffect(() => {
    if (!running) return;
    const timer = setTimeout(jobs.reload, POLL_MS);
    return () => clearTimeout(timer);
  }, [running, jobs.data]);
  if (jobs.error instanceof ApiError && jobs.error.status === 404) {
    return (
      <section aria-disabled="true">
        <h1>Replays</h1>
        <p class="warning" role="status">
          Replay by query is not available on this relay: it answers <code>{jobs.error.message}</code>. Single events can still be replayed from their
          page under Events.
        </p>
      </section>
    );
  }
  return (
    <section>
      <h1>Replays</h1>
      {canWrite && <NewReplay onStarted={jobs.reload} />}
      <ErrorMessage error={jobs.error} />
      <ErrorMessage error={cancel.error} />
      {jobs.data && (
        <table>
          <TableHead caption="Replay jobs" columns={['Replay', 'Status', 'Progress', 'Started', 'Finished', canWrite && 'Actions']} />
          <tbody>
            {jobs.data.data.map((job) => (
              <tr key={job.id}>
                <td>
                  <code>{job.id}</code>
                </td>
                <td>
                  {job.status}
                  {job.error && `: ${job.error}`}
                </td>
                <td>
                  <progress max={Math.max(1, job.matched)} value={job.replayed + job.skipped} aria-label={`Progress of ${job.id}`} /> {job.replayed} replayed,{' '}
                  {job.skipped} skipped of {job.matched}
                </td>
                <td>{when(job.createdAt)}</td>
                <td>{when(job.finishedAt)}</td>
                {canWrite && (
                  <td>
                    {job.status === 'running' && (
                      <button type="button" aria-label={`Cancel ${job.id}`} onClick={() => cancel.run(job.id)}>
                        Cancel
                      </button>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
