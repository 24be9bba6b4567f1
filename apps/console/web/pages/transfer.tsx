import { useState } from 'preact/hooks';
import { TableHead } from '../parts/table-head.js';
import { useConsole } from '../parts/console-context.js';
import { ErrorMessage } from '../parts/error-message.js';
import { CheckField, SelectField, TextField } from '../parts/fields.js';
import { useAction } from '../parts/use-action.js';
import { href } from '../route.js';

type Kind = 'sources' | 'destinations';
type Strategy = 'skip' | 'rename' | 'overwrite';

interface Validation {
  valid: boolean;
  validationResults: { index: number; name: string | null; slug: string | null; status: string; errors: string[]; warnings: string[]; renamedTo?: string }[];
  summary: { total: number; toCreate: number; toOverwrite: number; toSkip: number; errors: number };
}

interface Imported {
  success: boolean;
  summary: { imported: number; skipped: number; overwritten: number; failed: number };
}

/** An export file (its envelope) or a bare array of entries. */
function entriesOf(text: string, kind: Kind): unknown[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`The file is not JSON: ${(error as Error).message}`);
  }
  const entries = Array.isArray(parsed) ? parsed : (parsed as Record<string, unknown> | null)?.[kind];
  if (!Array.isArray(entries)) throw new Error(`The file holds no "${kind}" list`);
  return entries;
}

function download(name: string, text: string) {
  const link = document.createElement('a');
  link.href = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
  link.download = name;
  link.click();
  URL.revokeObjectURL(link.href);
}

function Preview({ validation }: { validation: Validation }) {
  const { summary } = validation;
  return (
    <div role="status">
      <p>
        {summary.total} entries: {summary.toCreate} to create, {summary.toOverwrite} to overwrite, {summary.toSkip} to skip, {summary.errors} with errors.
      </p>
      <table class="preview">
        <TableHead caption="Import preview" columns={['#', 'Name', 'Slug', 'Outcome', 'Errors and warnings']} />
        <tbody>
          {validation.validationResults.map((result) => (
            <tr key={result.index}>
              <td>{result.index}</td>
              <td>{result.name}</td>
              <td>{result.slug}</td>
              <td>{result.renamedTo ? `${result.status} to ${result.renamedTo}` : result.status}</td>
              <td>{[...result.errors, ...result.warnings].join(' · ')}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function TransferPage({ kind }: { kind: Kind }) {
  const { api, canWrite } = useConsole();
  const [includeSensitive, setIncludeSensitive] = useState(false);
  const [text, setText] = useState('');
  const [strategy, setStrategy] = useState<Strategy>('skip');
  const exported = useAction(async () => {
    const envelope = await api.get<object>(`/${kind}/export`, { includeSensitive });
    download(`${kind}-export.json`, JSON.stringify(envelope, null, 2));
    return envelope;
  });
  const importRequest = (validateOnly: boolean) => ({ [kind]: entriesOf(text, kind), conflictStrategy: strategy, validateOnly });
  const validate = useAction(() => api.send<Validation>('POST', `/${kind}/import`, importRequest(true)));
  const run = useAction(() => api.send<Imported>('POST', `/${kind}/import`, importRequest(false)));
  const readFile = async (event: Event) => {
    const file = (event.currentTarget as HTMLInputElement).files?.[0];
    if (file) setText(await file.text());
  };
  return (
    <section>
      <p>
        <a href={href(`/${kind}`)}>{kind === 'sources' ? 'Sources' : 'Destinations'}</a> /
      </p>
      <h1>Export and import {kind}</h1>
      <div class="panel">
        <h2>Export</h2>
        <CheckField label="Include secrets" checked={includeSensitive} onChange={setIncludeSensitive} />
        <button type="button" onClick={() => exported.run()} disabled={exported.busy}>
          Download export
        </button>
        <ErrorMessage error={exported.error} />
      </div>
      {canWrite && (
        <div class="panel form">
          <h2>Import</h2>
          <label class="field">
            <span>Import file</span>
            <input type="file" accept="application/json,.json" onChange={readFile} />
          </label>
          <TextField label="Import JSON" rows={8} value={text} onInput={setText} hint="An export file, or a list of entries." />
          <SelectField
            label="Conflict strategy"
            value={strategy}
            options={[
              { value: 'skip', label: 'skip existing slugs' },
              { value: 'rename', label: 'rename (add a numeric suffix)' },
              { value: 'overwrite', label: 'overwrite existing' },
            ]}
            onChange={(value) => setStrategy(value as Strategy)}
          />
          <p class="actions">
            <button type="button" onClick={() => validate.run()} disabled={validate.busy || text === ''}>
              Validate
            </button>
            <button type="button" onClick={() => run.run()} disabled={run.busy || text === ''}>
              Import
            </button>
          </p>
          <ErrorMessage error={validate.error} />
          <ErrorMessage error={run.error} />
          {validate.result && <Preview validation={validate.result} />}
          {run.result && (
            <p role="status">
              Imported {run.result.summary.imported}, overwritten {run.result.summary.overwritten}, skipped {run.result.summary.skipped}, failed{' '}
              {run.result.summary.failed}.
            </p>
          )}
        </div>
      )}
    </section>
  );
}
