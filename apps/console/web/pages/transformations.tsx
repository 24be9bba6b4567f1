import type { Page } from '../api.js';
import { useConsole } from '../parts/console-context.js';
import { ErrorMessage } from '../parts/error-message.js';
import { when } from '../parts/format.js';
import { TableHead } from '../parts/table-head.js';
import { useLoad } from '../parts/use-load.js';
import { href } from '../route.js';

/** DESIGN section 7 "Transformations": `env` values are shown masked, as the API masks them. */
export interface Transformation {
  id: string;
  name: string;
  code: string;
  env: Record<string, string>;
  createdAt: string;
  updatedAt: string;
}

export interface RouteLink {
  id: string;
  sourceId: string;
  destinationId: string;
  transformationId: string | null;
}

export function TransformationsPage() {
  const { api, canWrite } = useConsole();
  const list = useLoad(async () => {
    const [transformations, routes] = await Promise.all([api.get<Page<Transformation>>('/transformations', { pageSize: 100 }), api.get<Page<RouteLink>>('/routes', { pageSize: 100 })]);
    return { transformations: transformations.data, routes: routes.data };
  }, []);
  const usedBy = (id: string) => list.data?.routes.filter((route) => route.transformationId === id).length ?? 0;
  return (
    <section>
      <h1>Transformations</h1>
      <p>
        A transformation is JavaScript that reshapes a route's requests before its filter and its destination see them, run in a sandbox. Set it on a route on the{' '}
        <a href={href('/routes')}>Routes</a> page.
      </p>
      {canWrite && (
        <p class="actions">
          <a class="button" href={href('/transformations/new')}>
            New transformation
          </a>
        </p>
      )}
      <ErrorMessage error={list.error} />
      {list.data && (
        <table>
          <TableHead caption="Transformations" columns={['Name', 'Env', 'Routes using it', 'Updated']} />
          <tbody>
            {list.data.transformations.map((transformation) => (
              <tr key={transformation.id}>
                <td>
                  <a href={href(`/transformations/${transformation.id}`)}>{transformation.name}</a>
                </td>
                <td>{Object.keys(transformation.env).join(', ') || '—'}</td>
                <td>{usedBy(transformation.id)}</td>
                <td>{when(transformation.updatedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {list.data?.transformations.length === 0 && <p>No transformation yet.</p>}
    </section>
  );
}
