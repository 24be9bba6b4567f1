import { useState } from 'preact/hooks';
import { CodeEditor } from '../parts/code-editor.js';
import { useConsole } from '../parts/console-context.js';
import { DeleteButton } from '../parts/delete-button.js';
import { ErrorMessage } from '../parts/error-message.js';
import { pairMap, pairText, TextField } from '../parts/fields.js';
import { SettingsForm } from '../parts/settings-form.js';
import { useAction } from '../parts/use-action.js';
import { useLoad } from '../parts/use-load.js';
import { href, navigate } from '../route.js';
import { TransformationTest } from './transformation-test.js';
import type { Transformation } from './transformations.js';

const STARTING_CODE = `function transform(request, context) {
  // request: {body, headers, query, path}; context: {eventId, sourceId, destinationId, receivedAt, env}
  // Return the request to send, or null to send nothing.
  return request;
}
`;

/** `/transformations/new` or `/transformations/trs_...`: the code editor, with the test panel beside it. */
export function TransformationPage({ id }: { id: string }) {
  const { api } = useConsole();
  const isNew = id === 'new';
  const stored = useLoad(() => (isNew ? Promise.resolve(undefined) : api.get<Transformation>(`/transformations/${id}`)), [id]);
  return (
    <section>
      <p>
        <a href={href('/transformations')}>Transformations</a> /
      </p>
      <h1>{isNew ? 'New transformation' : (stored.data?.name ?? id)}</h1>
      <ErrorMessage error={stored.error} />
      {(isNew || stored.data) && <Workbench key={stored.data?.id ?? 'new'} transformation={stored.data} />}
    </section>
  );
}

function Workbench({ transformation }: { transformation?: Transformation }) {
  const { api, canWrite } = useConsole();
  const [name, setName] = useState(transformation?.name ?? '');
  const [code, setCode] = useState(transformation?.code ?? STARTING_CODE);
  // Masked values sent back unchanged keep the stored ones (the API's rule for PATCH).
  const [env, setEnv] = useState(pairText(transformation?.env ?? {}, '='));
  const save = useAction(async () => {
    const body = { name, code, env: pairMap(env, '=') };
    if (!transformation) {
      const created = await api.send<Transformation>('POST', '/transformations', body);
      navigate(`/transformations/${created.id}`);
    } else await api.send<Transformation>('PATCH', `/transformations/${transformation.id}`, body);
    return true;
  });
  return (
    <>
      <div class="workbench">
        <div class="panel">
          <h2>Code</h2>
          <SettingsForm submitLabel={transformation ? 'Save transformation' : 'Create transformation'} busy={save.busy} readOnly={!canWrite} onSubmit={() => void save.run()}>
            <TextField label="Name" value={name} onInput={setName} required />
            <CodeEditor label="Code" value={code} onInput={setCode} readOnly={!canWrite} />
            <TextField
              label="Env (one NAME=value per line)"
              rows={3}
              value={env}
              onInput={setEnv}
              hint="Secrets: shown masked once saved. A masked value left as it is keeps the stored one."
            />
          </SettingsForm>
          <ErrorMessage error={save.error} />
          {save.result && !save.busy && <p role="status">Saved.</p>}
        </div>
        {canWrite && <TransformationTest code={code} env={pairMap(env, '=')} transformationId={transformation?.id} />}
      </div>
      {canWrite && transformation && (
        <DeleteButton
          path={`/transformations/${transformation.id}`}
          back="/transformations"
          label="Delete transformation"
          question="Delete this transformation? A route that uses it must be changed first."
        />
      )}
    </>
  );
}
