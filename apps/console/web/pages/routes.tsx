import { useState } from 'preact/hooks';
import type { Page } from '../api.js';
import { TableHead } from '../parts/table-head.js';
import { useConsole } from '../parts/console-context.js';
import { ErrorMessage } from '../parts/error-message.js';
import { SelectField, TextField } from '../parts/fields.js';
import { useAction } from '../parts/use-action.js';
import { useLoad } from '../parts/use-load.js';
import { href } from '../route.js';

interface Route {
  id: string;
  sourceId: string;
  destinationId: string;
  enabled: boolean;
  filter?: unknown;
  transformationId: string | null;
  delaySeconds: number;
  createdAt: string;
}

interface Named {
  id: string;
  name: string;
}

/** A filter typed as JSON; empty means none. */
function parseFilter(text: string): object {
  if (text.trim() === '') return {};
  try {
    return { filter: JSON.parse(text) };
  } catch (error) {
    throw new Error(`The filter is not JSON: ${(error as Error).message}`);
  }
}

interface Names {
  sources: Named[];
  destinations: Named[];
  transformations: Named[];
}

/** A route's transformation (`''` for none) and delay as typed. */
interface Processing {
  transformationId: string;
  delaySeconds: string;
}

const processingOf = (route?: Route): Processing => ({ transformationId: route?.transformationId ?? '', delaySeconds: String(route?.delaySeconds ?? 0) });
const processingBody = (processing: Processing) => ({
  transformationId: processing.transformationId === '' ? null : processing.transformationId,
  delaySeconds: processing.delaySeconds.trim() === '' ? 0 : Number(processing.delaySeconds),
});

/** The transformation and delay fields, the same in the new route's form and an existing route's. */
function ProcessingFields({ transformations, value, onChange }: { transformations: Named[]; value: Processing; onChange(value: Processing): void }) {
  return (
    <>
      <SelectField
        label="Transformation"
        value={value.transformationId}
        options={[{ value: '', label: 'none' }, ...transformations.map((t) => ({ value: t.id, label: t.name }))]}
        onChange={(transformationId) => onChange({ ...value, transformationId })}
      />
      <TextField
        label="Delay (seconds)"
        type="number"
        value={value.delaySeconds}
        onInput={(delaySeconds) => onChange({ ...value, delaySeconds })}
        hint="0 to 86400: deliveries are not attempted before the event's receipt plus this delay."
      />
    </>
  );
}

function NewRoute({ names, onCreated }: { names: Names; onCreated(): void }) {
  const { api } = useConsole();
  const { sources, destinations } = names;
  const [sourceId, setSourceId] = useState(sources[0]?.id ?? '');
  const [destinationId, setDestinationId] = useState(destinations[0]?.id ?? '');
  const [filter, setFilter] = useState('');
  const [processing, setProcessing] = useState(processingOf());
  const [sampleEventId, setSampleEventId] = useState('');
  const create = useAction(async () => {
    await api.send('POST', '/routes', { sourceId, destinationId, ...parseFilter(filter), ...processingBody(processing) });
    onCreated();
  });
  // The API's filter tester against a stored event (DESIGN "Route filters").
  const test = useAction(() => api.send<{ matched: boolean }>('POST', '/filters/test', { ...parseFilter(filter), eventId: sampleEventId.trim() }));
  return (
    <form
      class="panel form"
      onSubmit={(event) => {
        event.preventDefault();
        void create.run();
      }}
    >
      <h2>New route</h2>
      <SelectField label="From source" value={sourceId} options={sources.map((s) => ({ value: s.id, label: s.name }))} onChange={setSourceId} />
      <SelectField label="To destination" value={destinationId} options={destinations.map((d) => ({ value: d.id, label: d.name }))} onChange={setDestinationId} />
      <TextField label="Filter (JSON, optional)" rows={3} value={filter} onInput={setFilter} placeholder='{"body": {"type": "order.created"}}' />
      <ProcessingFields transformations={names.transformations} value={processing} onChange={setProcessing} />
      <TextField label="Event id to test the filter on" value={sampleEventId} onInput={setSampleEventId} placeholder="evt_..." />
      <p class="actions">
        <button type="button" onClick={() => test.run()} disabled={test.busy || !sampleEventId.trim() || !filter.trim()}>
          Test filter
        </button>
        <button type="submit" disabled={create.busy || !sourceId || !destinationId}>
          Create route
        </button>
      </p>
      <ErrorMessage error={test.error} />
      <ErrorMessage error={create.error} />
      {test.result && <p role="status">{test.result.matched ? 'The filter matches this event.' : 'The filter does not match this event.'}</p>}
    </form>
  );
}

/** An existing route's transformation and delay, edited in a row of their own below it. */
function RouteProcessing({ route, label, transformations, onSaved }: { route: Route; label: string; transformations: Named[]; onSaved(): void }) {
  const { api } = useConsole();
  const [processing, setProcessing] = useState(processingOf(route));
  const save = useAction(async () => {
    await api.send('PATCH', `/routes/${route.id}`, processingBody(processing));
    onSaved();
  });
  return (
    <form
      class="form"
      aria-label={`Settings of route ${label}`}
      onSubmit={(event) => {
        event.preventDefault();
        void save.run();
      }}
    >
      <ProcessingFields transformations={transformations} value={processing} onChange={setProcessing} />
      <button type="submit" disabled={save.busy}>
        Save route
      </button>
      <ErrorMessage error={save.error} />
    </form>
  );
}

function TransformationCell({ route, names }: { route: Route; names: Names | undefined }) {
  if (!route.transformationId) return <>none</>;
  return <a href={href(`/transformations/${route.transformationId}`)}>{names?.transformations.find((t) => t.id === route.transformationId)?.name ?? route.transformationId}</a>;
}

const nameOf = (list: Named[] | undefined, id: string) => list?.find((item) => item.id === id)?.name ?? id;
const COLUMNS = 8;

function RouteRow(props: { route: Route; names: Names | undefined; onChange(route: Route, action: 'toggle' | 'delete'): void; onSaved(): void }) {
  const { canWrite } = useConsole();
  const { route, names } = props;
  const [editing, setEditing] = useState(false);
  const label = `${nameOf(names?.sources, route.sourceId)} to ${nameOf(names?.destinations, route.destinationId)}`;
  return (
    <>
      <tr>
        <td>
          <a href={href(`/sources/${route.sourceId}`)}>{nameOf(names?.sources, route.sourceId)}</a>
        </td>
        <td>
          <a href={href(`/destinations/${route.destinationId}`)}>{nameOf(names?.destinations, route.destinationId)}</a>
        </td>
        <td>{route.filter ? <code>{JSON.stringify(route.filter)}</code> : 'all events'}</td>
        <td data-column="transformation">
          <TransformationCell route={route} names={names} />
        </td>
        <td data-column="delay">{route.delaySeconds > 0 ? `${route.delaySeconds} s` : 'none'}</td>
        <td>{route.enabled ? 'yes' : 'no'}</td>
        {canWrite && (
          <td>
            <button type="button" class="quiet" aria-label={`Edit route ${label}`} aria-expanded={editing} onClick={() => setEditing(!editing)}>
              Edit
            </button>{' '}
            <button type="button" aria-label={`${route.enabled ? 'Disable' : 'Enable'} route ${label}`} onClick={() => props.onChange(route, 'toggle')}>
              {route.enabled ? 'Disable' : 'Enable'}
            </button>{' '}
            <button type="button" class="danger" aria-label={`Delete route ${label}`} onClick={() => props.onChange(route, 'delete')}>
              Delete
            </button>
          </td>
        )}
      </tr>
      {canWrite && editing && names && (
        <tr>
          <td colSpan={COLUMNS}>
            <RouteProcessing
              route={route}
              label={label}
              transformations={names.transformations}
              onSaved={() => {
                setEditing(false);
                props.onSaved();
              }}
            />
          </td>
        </tr>
      )}
    </>
  );
}

export function RoutesPage() {
  const { api, canWrite } = useConsole();
  const names = useLoad(async () => {
    const [sources, destinations, transformations] = await Promise.all(
      ['/sources', '/destinations', '/transformations'].map((path) => api.get<Page<Named>>(path, { pageSize: 100 }).then((page) => page.data)),
    );
    return { sources: sources!, destinations: destinations!, transformations: transformations! } satisfies Names;
  }, []);
  const routes = useLoad(() => api.get<Page<Route>>('/routes', { pageSize: 100 }), []);
  const change = useAction(async (route: Route, action: 'toggle' | 'delete') => {
    if (action === 'delete') await api.send('DELETE', `/routes/${route.id}`);
    else await api.send('PATCH', `/routes/${route.id}`, { enabled: !route.enabled });
    routes.reload();
  });
  return (
    <section>
      <h1>Routes</h1>
      <p>
        A route sends the events of a source to a destination, optionally only those its filter matches, optionally through a{' '}
        <a href={href('/transformations')}>transformation</a> and after a delay.
      </p>
      <ErrorMessage error={names.error} />
      {canWrite && names.data && <NewRoute names={names.data} onCreated={routes.reload} />}
      <ErrorMessage error={routes.error} />
      <ErrorMessage error={change.error} />
      {routes.data && (
        <table>
          <TableHead caption="Routes" columns={['Source', 'Destination', 'Filter', 'Transformation', 'Delay', 'Enabled', canWrite && 'Actions']} />
          <tbody>
            {routes.data.data.map((route) => (
              <RouteRow key={route.id} route={route} names={names.data} onChange={change.run} onSaved={routes.reload} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
