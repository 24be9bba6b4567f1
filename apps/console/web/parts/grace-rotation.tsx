import { useState } from 'preact/hooks';
import { CopyButton } from './copy-button.js';
import { ErrorMessage } from './error-message.js';
import { TextField } from './fields.js';
import { useAction } from './use-action.js';

/** A rotate endpoint's answer, as the page reads it: the new secret (shown once) and the API's message. */
export interface Rotated {
  secret: string;
  message: string;
}

/**
 * Rotating a secret with an optional grace period (DESIGN section 7, "Secret rotation with overlap"):
 * during it the previous secret keeps working, and the API's message says until when.
 */
export function GraceRotation({ label, rotate }: { label: string; rotate(graceSeconds: number): Promise<Rotated> }) {
  const [grace, setGrace] = useState('0');
  const rotation = useAction(() => rotate(Number(grace)));
  return (
    <>
      <TextField label="Grace period (seconds)" type="number" value={grace} onInput={setGrace} hint="How long the previous secret keeps working: 0 ends it at once, at most 604800 (7 days)." />
      <button type="button" onClick={() => rotation.run()} disabled={rotation.busy}>
        {label}
      </button>
      <ErrorMessage error={rotation.error} />
      {rotation.result && (
        <p role="status">
          {rotation.result.message} New secret (shown this once): <code>{rotation.result.secret}</code> <CopyButton text={rotation.result.secret} label="Copy new secret" />
        </p>
      )}
    </>
  );
}
