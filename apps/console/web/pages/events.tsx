import { useState } from 'preact/hooks';
import type { Page, Query } from '../api.js';
import { TableHead } from '../parts/table-head.js';
import { useConsole } from '../parts/console-context.js';
import { ErrorMessage } from '../parts/error-message.js';
import { EVENT_STATUS_OPTIONS, isoToLocal, localToIso, SIGNATURE_OPTIONS } from '../parts/event-filter-options.js';
import { SelectField, TextField } from '../parts/fields.js';
import { when } from '../parts/format.js';
import { Pager } from '../parts/pager.js';
import { useAction } from '../parts/use-action.js';
import { useLoad } from '../parts/use-load.js';
import { href, navigate } from '../route.js';

export interface EventSummary {
  id: string;
  sourceId: string;
  status: string;
  payloadSize: number;
  deliveriesCount: number;
  deliveriesSucceeded: number;
  receivedAt: string;
}

/** The filters live in the address (`#/events?search=...`), so the back button and a shared link keep them. */
const FILTERS = ['search', 'status', 'sourceId', 'from', 'to', 'signatureValid'] as const;
type Filters = Record<(typeof FILTERS)[number], string>;
const PAGE_SIZE = 100;

export function EventsPage({ params }: { params: URLSearchParams }) {
  const { api, canWrite } = useConsole();
  const applied = Object.fromEntries(FILTERS.map((name) => [name, params.get(name) ?? ''])) as Filters;
  const page = Number(params.get('page') ?? '1') || 1;
  const [draft, setDraft] = useState(applied);
  const set = (name: keyof Filters) => (value: string) => setDraft((current) => ({ ...current, [name]: value }));
  const sources = useLoad(() => api.get<Page<{ id: string; name: string }>>('/sources', { pageSize: 100 }), []);
  const query: Query = { ...applied, from: localToIso(applied.from), to: localToIso(applied.to), page, pageSize: PAGE_SIZE };
  const events = useLoad(() => api.get<Page<EventSummary>>('/events', query), [params.toString()]);
  const go = (filters: Filters, toPage: number) => {
    const next = new URLSearchParams();
    for (const name of FILTERS) if (filters[name]) next.set(name, filters[name]);
    if (toPage > 1) next.set('page', String(toPage));
    navigate(`/events?${next}`);
  };
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const toggle = (id: string) =>
    setSelected((current) => {
      const next = new Set(current);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  const bulkReplay = useAction(() =>
    api.send<{ message: string; eventsQueued: number; deliveriesCreated: number }>('POST', '/events/bulk/replay', { eventIds: [...selected] }),
  );
  const sourceName = (id: string) => sources.data?.data.find((source) => source.id === id)?.name ?? id;
  return (
    <section>
      <h1>Events</h1>
      <form
        class="filters"
        role="search"
        aria-label="Filter events"
        onSubmit={(event) => {
          event.preventDefault();
          go(draft, 1);
        }}
      >
        <TextField label="Search payload" type="search" value={draft.search} onInput={set('search')} placeholder="text in the payload" />
        <SelectField label="Status" value={draft.status} options={EVENT_STATUS_OPTIONS} onChange={set('status')} />
        <SelectField label="Source" value={draft.sourceId} options={[{ value: '', label: 'any' }, ...(sources.data?.data ?? []).map((s) => ({ value: s.id, label: s.name }))]} onChange={set('sourceId')} />
        <TextField label="Received from" type="datetime-local" value={draft.from} onInput={set('from')} />
        <TextField label="Received to" type="datetime-local" value={draft.to} onInput={set('to')} />
        <SelectField label="Signature" value={draft.signatureValid} options={SIGNATURE_OPTIONS} onChange={set('signatureValid')} />
        <button type="submit">Apply filters</button>
      </form>
      <ErrorMessage error={events.error} />
      {events.loading && <p aria-live="polite">Loading…</p>}
      {canWrite && (
        <p class="actions">
          <button type="button" disabled={selected.size === 0 || bulkReplay.busy} onClick={() => bulkReplay.run()}>
            Replay selected ({selected.size})
          </button>
        </p>
      )}
      <ErrorMessage error={bulkReplay.error} />
      {bulkReplay.result && (
        <p role="status">
          {bulkReplay.result.message}: {bulkReplay.result.eventsQueued} events queued, {bulkReplay.result.deliveriesCreated} new deliveries.
        </p>
      )}
      {events.data && (
        <>
          <table class="events" data-rendered-rows={events.data.data.length}>
            <TableHead caption="Events" columns={[canWrite && 'Select', 'Event', 'Source', 'Status', 'Received', 'Size', 'Delivered']} />
            <tbody>
              {events.data.data.map((event) => (
                <tr key={event.id}>
                  {canWrite && (
                    <td>
                      <input type="checkbox" aria-label={`Select ${event.id}`} checked={selected.has(event.id)} onChange={() => toggle(event.id)} />
                    </td>
                  )}
                  <td>
                    <a href={href(`/events/${event.id}`)}>
                      <code>{event.id}</code>
                    </a>
                  </td>
                  <td>{sourceName(event.sourceId)}</td>
                  <td>
                    <span class={`status status-${event.status}`}>{event.status}</span>
                  </td>
                  <td>{when(event.receivedAt)}</td>
                  <td>{event.payloadSize} B</td>
                  <td>
                    {event.deliveriesSucceeded} / {event.deliveriesCount}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {events.data.data.length === 0 && <p>No event matches these filters.</p>}
          {events.data.pagination.searchedBackTo && (
            <p class="warning" role="status">
              The search looked at events back to {when(events.data.pagination.searchedBackTo)} only.{' '}
              <button type="button" class="quiet" onClick={() => go({ ...applied, to: isoToLocal(events.data!.pagination.searchedBackTo!) }, 1)}>
                Search older events
              </button>
            </p>
          )}
          <Pager pagination={events.data.pagination} rows={events.data.data.length} noun="events" onPage={(toPage) => go(applied, toPage)} />
        </>
      )}
    </section>
  );
}
