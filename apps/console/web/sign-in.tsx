import { useState } from 'preact/hooks';
import { createApi } from './api.js';
import { ErrorMessage } from './parts/error-message.js';
import { useAction } from './parts/use-action.js';

/** Checks the key with one read before keeping it, so a typo is told at once (and stays in the field). */
export function SignIn({ onSignedIn }: { onSignedIn(key: string): void }) {
  const [key, setKey] = useState('');
  const check = useAction(async (candidate: string) => {
    await createApi(candidate).get('/sources', { pageSize: 1 });
    onSignedIn(candidate);
  });
  return (
    <main class="sign-in">
      <h1>Webhook Relay</h1>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void check.run(key.trim());
        }}
      >
        <label class="field">
          <span>API key</span>
          <input type="password" autocomplete="off" value={key} onInput={(event) => setKey(event.currentTarget.value)} required />
        </label>
        <button type="submit" disabled={check.busy}>
          Sign in
        </button>
        <ErrorMessage error={check.error} />
        <p class="hint">The key is kept in this tab only and forgotten when the tab closes.</p>
      </form>
    </main>
  );
}
