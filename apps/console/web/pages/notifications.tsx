import { useState } from 'preact/hooks';
import type { Page } from '../api.js';
import { useConsole } from '../parts/console-context.js';
import { ErrorMessage } from '../parts/error-message.js';
import { CheckField, SelectField, TextField } from '../parts/fields.js';
import { when } from '../parts/format.js';
import { TableHead } from '../parts/table-head.js';
import { useAction } from '../parts/use-action.js';
import { useLoad } from '../parts/use-load.js';

/** DESIGN section 7 "Notifications". */
interface Channel {
  id: string;
  name: string;
  type: 'webhook' | 'slack';
  url: string;
  topics: string[];
  enabled: boolean;
  lastDeliveredAt: string | null;
  lastFailureAt: string | null;
  lastError: string | null;
}

const TOPICS = ['issue.opened', 'issue.reopened', 'issue.resolved', 'destination.disabled', 'destination.auto_disable_warning'];

function NewChannel({ onCreated }: { onCreated(): void }) {
  const { api } = useConsole();
  const [draft, setDraft] = useState({ name: '', type: 'webhook' as Channel['type'], url: '' });
  const [topics, setTopics] = useState<string[]>(TOPICS);
  const create = useAction(async () => {
    await api.send('POST', '/notification-channels', { ...draft, topics });
    onCreated();
  });
  return (
    <form
      class="panel form"
      onSubmit={(event) => {
        event.preventDefault();
        void create.run();
      }}
    >
      <h2>New channel</h2>
      <TextField label="Channel name" value={draft.name} onInput={(name) => setDraft({ ...draft, name })} required />
      <SelectField label="Type" value={draft.type} options={['webhook', 'slack'] as const} onChange={(type) => setDraft({ ...draft, type })} />
      <TextField label="Channel URL" type="url" value={draft.url} onInput={(url) => setDraft({ ...draft, url })} required placeholder="https://hooks.slack.com/services/..." />
      {TOPICS.map((topic) => (
        <CheckField key={topic} label={topic} checked={topics.includes(topic)} onChange={(on) => setTopics(on ? [...topics, topic] : topics.filter((t) => t !== topic))} />
      ))}
      <p class="actions">
        <button type="submit" disabled={create.busy}>
          Create channel
        </button>
      </p>
      <ErrorMessage error={create.error} />
    </form>
  );
}

function ChannelRow({ channel, onChanged }: { channel: Channel; onChanged(): void }) {
  const { api, canWrite } = useConsole();
  const test = useAction(() => api.send<{ delivered: boolean; statusCode: number | null; error: string | null }>('POST', `/notification-channels/${channel.id}/test`));
  const toggle = useAction(async () => {
    await api.send('PATCH', `/notification-channels/${channel.id}`, { enabled: !channel.enabled });
    onChanged();
  });
  const remove = useAction(async () => {
    await api.send('DELETE', `/notification-channels/${channel.id}`);
    onChanged();
  });
  return (
    <tr>
      <td>{channel.name}</td>
      <td>{channel.type}</td>
      <td>
        <code>{channel.url}</code>
      </td>
      <td>{channel.topics.join(', ')}</td>
      <td>{channel.enabled ? 'enabled' : 'disabled'}</td>
      <td>{when(channel.lastDeliveredAt)}</td>
      <td>{channel.lastFailureAt ? `${when(channel.lastFailureAt)}: ${channel.lastError ?? ''}` : '—'}</td>
      {canWrite && (
        <td>
          <button type="button" aria-label={`Send a test to ${channel.name}`} disabled={test.busy} onClick={() => test.run().then(onChanged)}>
            Send test
          </button>
          <button type="button" aria-label={`${channel.enabled ? 'Disable' : 'Enable'} ${channel.name}`} onClick={() => toggle.run()}>
            {channel.enabled ? 'Disable' : 'Enable'}
          </button>
          <button type="button" aria-label={`Delete ${channel.name}`} onClick={() => remove.run()}>
            Delete
          </button>
          {test.result && <span role="status">{test.result.delivered ? ` Delivered (${test.result.statusCode})` : ` Not delivered: ${test.result.error}`}</span>}
          <ErrorMessage error={test.error ?? toggle.error ?? remove.error} />
        </td>
      )}
    </tr>
  );
}

export function NotificationsPage() {
  const { api, canWrite } = useConsole();
  const channels = useLoad(() => api.get<Page<Channel>>('/notification-channels', { pageSize: 100 }), []);
  return (
    <section>
      <h1>Notifications</h1>
      {canWrite && <NewChannel onCreated={channels.reload} />}
      <ErrorMessage error={channels.error} />
      {channels.data && (
        <table>
          <TableHead caption="Notification channels" columns={['Name', 'Type', 'URL', 'Topics', 'State', 'Last delivered', 'Last failure', canWrite && 'Actions']} />
          <tbody>
            {channels.data.data.map((channel) => (
              <ChannelRow key={channel.id} channel={channel} onChanged={channels.reload} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
