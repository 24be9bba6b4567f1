import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

/** A form's values as typed, and a setter per field (text stays text until sent, so nothing is lost on an error). */
export function useFormValues<V extends object>(initial: () => V) {
  const [values, setValues] = useState(initial);
  const set =
    <K extends keyof V>(name: K) =>
    (value: V[K]) =>
      setValues((current) => ({ ...current, [name]: value }));
  return { values, setValues, set };
}

/** The create and edit form of a resource: read-only (no submit) for a key that may not write. */
export function SettingsForm(props: { submitLabel: string; busy: boolean; readOnly: boolean; onSubmit(): void; children: ComponentChildren }) {
  return (
    <form
      class="form"
      onSubmit={(event) => {
        event.preventDefault();
        props.onSubmit();
      }}
    >
      <fieldset disabled={props.readOnly} class="plain">
        {props.children}
        {!props.readOnly && (
          <button type="submit" disabled={props.busy}>
            {props.submitLabel}
          </button>
        )}
      </fieldset>
    </form>
  );
}
