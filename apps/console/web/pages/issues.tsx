import { useState } from 'preact/hooks';
import type { Page } from '../api.js';
import { useConsole } from '../parts/console-context.js';
import { ErrorMessage } from '../parts/error-message.js';
import { SelectField } from '../parts/fields.js';
import { when } from '../parts/format.js';
import { Pager } from '../parts/pager.js';
import { TableHead } from '../parts/table-head.js';
import { useAction } from '../parts/use-action.js';
import { useLoad } from '../parts/use-load.js';
import { href } from '../route.js';

/** DESIGN section 7 "Issues". */
export interface Issue {
  id: string;
  destinationId: string;
  kind: string;
  status: 'open' | 'acknowledged' | 'resolved' | 'ignored';
  firstSeenAt: string;
  lastSeenAt: string;
  failedAttempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  sampleEventIds: string[];
}

const STATUS_OPTIONS = [
  { value: 'open', label: 'Open' },
  { value: 'acknowledged', label: 'Acknowledged' },
  { value: 'resolved', label: 'Resolved' },
  { value: 'ignored', label: 'Ignored' },
  { value: '', label: 'Any status' },
];

const ACTIONS = [
  ['acknowledged', 'Acknowledge'],
  ['resolved', 'Resolve'],
  ['ignored', 'Ignore'],
] as const;

function IssueRow({ issue, onChanged }: { issue: Issue; onChanged(): void }) {
  const { api, canWrite } = useConsole();
  const patch = useAction(async (status: string) => {
    await api.send('PATCH', `/issues/${issue.id}`, { status });
    onChanged();
  });
  const replay = useAction(() => api.send<{ id: string; matched: number }>('POST', `/issues/${issue.id}/replay`, {}));
  return (
    <tr>
      <td>
        <code>{issue.kind}</code> on <a href={href(`/destinations/${issue.destinationId}`)}>{issue.destinationId}</a>
      </td>
      <td>{issue.status}</td>
      <td>{issue.failedAttempts}</td>
      <td>
        {issue.lastStatusCode !== null && `${issue.lastStatusCode}: `}
        {issue.lastError ?? '—'}
      </td>
      <td>
        {issue.sampleEventIds.slice(0, 3).map((id) => (
          <a key={id} href={href(`/events/${id}`)}>
            <code>{id}</code>{' '}
          </a>
        ))}
      </td>
      <td>{when(issue.lastSeenAt)}</td>
      {canWrite && (
        <td>
          {ACTIONS.filter(([status]) => status !== issue.status).map(([status, label]) => (
            <button key={status} type="button" aria-label={`${label} ${issue.id}`} disabled={patch.busy} onClick={() => patch.run(status)}>
              {label}
            </button>
          ))}
          <button type="button" aria-label={`Replay ${issue.id}`} disabled={replay.busy} onClick={() => replay.run()}>
            Replay
          </button>
          {replay.result && <span role="status"> Replay {replay.result.id}: {replay.result.matched} events</span>}
          <ErrorMessage error={patch.error} />
          <ErrorMessage error={replay.error} />
        </td>
      )}
    </tr>
  );
}

/** Open issues first (the default filter), the latest seen first, with what to do about each. */
export function IssuesPage({ onChanged }: { onChanged(): void }) {
  const { api, canWrite } = useConsole();
  const [status, setStatus] = useState('open');
  const [page, setPage] = useState(1);
  const issues = useLoad(() => api.get<Page<Issue>>('/issues', { status, page, pageSize: 50 }), [status, page]);
  const changed = () => {
    issues.reload();
    onChanged();
  };
  return (
    <section>
      <h1>Issues</h1>
      <form class="filters" onSubmit={(event) => event.preventDefault()}>
        <SelectField
          label="Status"
          value={status}
          options={STATUS_OPTIONS}
          onChange={(value) => {
            setStatus(value);
            setPage(1);
          }}
        />
      </form>
      <ErrorMessage error={issues.error} />
      {issues.data && (
        <>
          <table>
            <TableHead caption="Issues" columns={['Issue', 'Status', 'Failed attempts', 'Last error', 'Sample events', 'Last seen', canWrite && 'Actions']} />
            <tbody>
              {issues.data.data.map((issue) => (
                <IssueRow key={issue.id} issue={issue} onChanged={changed} />
              ))}
            </tbody>
          </table>
          {issues.data.data.length === 0 && <p role="status">No {status || ''} issues.</p>}
          <Pager pagination={issues.data.pagination} rows={issues.data.data.length} noun="issues" onPage={setPage} />
        </>
      )}
    </section>
  );
}
