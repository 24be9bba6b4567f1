import { TableHead } from '../parts/table-head.js';
import { CopyButton } from '../parts/copy-button.js';
import { ResourceIndex } from '../parts/resource-index.js';
import { href } from '../route.js';
import { SourceForm, type Source } from './source-form.js';

export function SourcesPage() {
  return (
    <ResourceIndex<Source>
      title="Sources"
      path="/sources"
      noun="source"
      renderForm={(form) => <SourceForm submitLabel="Create source" busy={form.busy} readOnly={false} onSubmit={form.onSubmit} />}
      renderTable={(sources) => (
        <table>
          <TableHead caption="Sources" columns={['Name', 'Webhook URL', 'Enabled', 'Events']} />
          <tbody>
            {sources.map((source) => (
              <tr key={source.id}>
                <td>
                  <a href={href(`/sources/${source.id}`)}>{source.name}</a> <small>{source.slug}</small>
                </td>
                <td>
                  <code>{source.webhookUrl}</code> <CopyButton text={source.webhookUrl} label={`Copy webhook URL of ${source.name} (${source.slug})`} />
                </td>
                <td>{source.enabled ? 'yes' : 'no'}</td>
                <td>{source.eventsCount ?? 0}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    />
  );
}
