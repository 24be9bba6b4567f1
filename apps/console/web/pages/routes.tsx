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

function NewRoute({ sources, destinations, onCreated }: { sources: Named[]; destinations: Named[]; onCreated(): void }) {
  const { api } = useConsole();
  const [sourceId, setSourceId] = useState(sources[0]?.id ?? '');
  const [destinationId, setDestinationId] = useState(destinations[0]?.id ?? '');
  const [filter, setFilter] = useState('');
  const [sampleEventId, setSampleEventId] = useState('');
  const create = useAction(async () => {
    await api.send('POST', '/routes', { sourceId, destinationId, ...parseFilter(filter) });
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

export function RoutesPage() {
  const { api, canWrite } = useConsole();
  const names = useLoad(async () => {
    const [sources, destinations] = await Promise.all([api.get<Page<Named>>('/sources', { pageSize: 100 }), api.get<Page<Named>>('/destinations', { pageSize: 100 })]);
    return { sources: sources.data, destinations: destinations.data };
  }, []);
  const routes = useLoad(() => api.get<Page<Route>>('/routes', { pageSize: 100 }), []);
  const change = useAction(async (route: Route, action: 'toggle' | 'delete') => {
    if (action === 'delete') await api.send('DELETE', `/routes/${route.id}`);
    else await api.send('PATCH', `/routes/${route.id}`, { enabled: !route.enabled });
    routes.reload();
  });
  const nameOf = (list: Named[] | undefined, id: string) => list?.find((item) => item.id === id)?.name ?? id;
  return (
    <section>
      <h1>Routes</h1>
      <p>A route sends the events of a source to a destination, optionally only those its filter matches.</p>
      <ErrorMessage error={names.error} />
      {canWrite && names.data && <NewRoute sources={names.data.sources} destinations={names.data.destinations} onCreated={routes.reload} />}
      <ErrorMessage error={routes.error} />
      <ErrorMessage error={change.error} />
      {routes.data && (
        <table>
          <TableHead caption="Routes" columns={['Source', 'Destination', 'Filter', 'Enabled', canWrite && 'Actions']} />
          <tbody>
            {routes.data.data.map((route) => {
              const label = `${nameOf(names.data?.sources, route.sourceId)} to ${nameOf(names.data?.destinations, route.destinationId)}`;
              return (
                <tr key={route.id}>
                  <td>
                    <a href={href(`/sources/${route.sourceId}`)}>{nameOf(names.data?.sources, route.sourceId)}</a>
                  </td>
                  <td>
                    <a href={href(`/destinations/${route.destinationId}`)}>{nameOf(names.data?.destinations, route.destinationId)}</a>
                  </td>
                  <td>{route.filter ? <code>{JSON.stringify(route.filter)}</code> : 'all events'}</td>
                  <td>{route.enabled ? 'yes' : 'no'}</td>
                  {canWrite && (
                    <td>
                      <button type="button" aria-label={`${route.enabled ? 'Disable' : 'Enable'} route ${label}`} onClick={() => change.run(route, 'toggle')}>
                        {route.enabled ? 'Disable' : 'Enable'}
                      </button>{' '}
                      <button type="button" class="danger" aria-label={`Delete route ${label}`} onClick={() => change.run(route, 'delete')}>
                        Delete
                      </button>
                    </td>
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
