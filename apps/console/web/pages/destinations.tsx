import { TableHead } from '../parts/table-head.js';
import { ms, percent } from '../parts/format.js';
import { ResourceIndex } from '../parts/resource-index.js';
import { href } from '../route.js';
import { DestinationForm, type Destination } from './destination-form.js';

export function DestinationsPage() {
  return (
    <ResourceIndex<Destination>
      title="Destinations"
      path="/destinations"
      noun="destination"
      renderForm={(form) => <DestinationForm submitLabel="Create destination" busy={form.busy} readOnly={false} onSubmit={form.onSubmit} />}
      renderTable={(destinations) => (
        <table>
          <TableHead caption="Destinations" columns={['Name', 'URL', 'Enabled', 'Success (24 h)', 'Average latency', 'Attempts (24 h)']} />
          <tbody>
            {destinations.map((destination) => (
              <tr key={destination.id}>
                <td>
                  <a href={href(`/destinations/${destination.id}`)}>{destination.name}</a>
                </td>
                <td>
                  <code>{destination.url ?? destination.type}</code>
                </td>
                <td>{destination.enabled ? 'yes' : 'no'}</td>
                <td>{percent(destination.successRate)}</td>
                <td>{ms(destination.avgLatency)}</td>
                <td>{destination.deliveriesCount}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    />
  );
}
