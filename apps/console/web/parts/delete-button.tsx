import { useConsole } from './console-context.js';
import { ErrorMessage } from './error-message.js';
import { useAction } from './use-action.js';
import { navigate } from '../route.js';

/** Deletes the resource at `path` after a confirmation, then goes to `back`; a refusal shows the API's message. */
export function DeleteButton({ path, back, label, question }: { path: string; back: string; label: string; question: string }) {
  const { api } = useConsole();
  const remove = useAction(async () => {
    if (!confirm(question)) return;
    await api.send('DELETE', path);
    navigate(back);
  });
  return (
    <p>
      <button type="button" class="danger" onClick={() => remove.run()}>
        {label}
      </button>
      <ErrorMessage error={remove.error} />
    </p>
  );
}
