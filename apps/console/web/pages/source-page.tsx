import { useConsole } from '../parts/console-context.js';
import { CopyButton } from '../parts/copy-button.js';
import { ErrorMessage } from '../parts/error-message.js';
import { GraceRotation } from '../parts/grace-rotation.js';
import { useAction } from '../parts/use-action.js';
import { useLoad } from '../parts/use-load.js';
import { DeleteButton } from '../parts/delete-button.js';
import { href } from '../route.js';
import { SourceForm, type Source } from './source-form.js';

interface RotatedSecret {
  verificationConfig: { type: string; secret: string };
  message: string;
}

export function SourcePage({ id }: { id: string }) {
  const { api, canWrite } = useConsole();
  const source = useLoad(() => api.get<Source>(`/sources/${id}`), [id]);
  const save = useAction((body: object) => api.send<Source>('PATCH', `/sources/${id}`, body));
  const rotate = async (graceSeconds: number) => {
    const rotated = await api.send<RotatedSecret>('POST', `/sources/${id}/rotate-secret`, { graceSeconds });
    return { secret: rotated.verificationConfig.secret, message: rotated.message };
  };
  const current = source.data;
  return (
    <section>
      <p>
        <a href={href('/sources')}>Sources</a> /
      </p>
      <h1>{current?.name ?? id}</h1>
      <ErrorMessage error={source.error} />
      {current && (
        <>
          <p>
            Webhook URL <code>{current.webhookUrl}</code> <CopyButton text={current.webhookUrl} label="Copy webhook URL" />
          </p>
          <p>
            {current.eventsCount ?? 0} events · <a href={href(`/events?sourceId=${current.id}`)}>Events of this source</a>
          </p>
          {canWrite && (
            <div class="panel">
              <h2>Signing secret</h2>
              <GraceRotation label="Rotate secret" rotate={rotate} />
            </div>
          )}
          <div class="panel">
            <h2>Settings</h2>
            <SourceForm key={current.id} source={current} submitLabel="Save source" busy={save.busy} readOnly={!canWrite} onSubmit={save.run} />
            <ErrorMessage error={save.error} />
            {save.result && !save.busy && <p role="status">Saved.</p>}
          </div>
          {canWrite && <DeleteButton path={`/sources/${id}`} back="/sources" label="Delete source" question="Delete this source with all its events?" />}
        </>
      )}
    </section>
  );
}
