import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';

/** Every control has a label (wrapping it, or pointing at it), so its accessible name is the label's text. */
interface TextProps {
  label: string;
  value: string;
  onInput(value: string): void;
  type?: 'text' | 'number' | 'url' | 'password' | 'datetime-local' | 'search';
  placeholder?: string;
  required?: boolean;
  /** A textarea of this many rows instead of a one-line input. */
  rows?: number;
  hint?: string;
}

export function TextField({ label, value, onInput, type = 'text', placeholder, required, rows, hint }: TextProps) {
  const id = useId();
  const input = (event: Event) => onInput((event.currentTarget as HTMLInputElement).value);
  // The hint describes the control (aria-describedby) instead of joining its name.
  const described = hint ? `${id}-hint` : undefined;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {rows ? (
        <textarea id={id} rows={rows} value={value} onInput={input} placeholder={placeholder} required={required} spellcheck={false} aria-describedby={described} />
      ) : (
        <input id={id} type={type as 'text'} value={value} onInput={input} placeholder={placeholder} required={required} aria-describedby={described} />
      )}
      {hint && <small id={described}>{hint}</small>}
    </div>
  );
}

export function SelectField<V extends string>(props: { label: string; value: V; options: readonly V[] | { value: V; label: string }[]; onChange(value: V): void }) {
  const options = props.options.map((option) => (typeof option === 'string' ? { value: option, label: option } : option));
  const id = useId();
  // Labelled by reference: a wrapping label would add the chosen option's text to the select's name.
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select id={id} value={props.value} onChange={(event) => props.onChange((event.currentTarget as HTMLSelectElement).value as V)}>
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </div>
  );
}

export function CheckField({ label, checked, onChange }: { label: string; checked: boolean; onChange(checked: boolean): void }) {
  return (
    <label class="check">
      <input type="checkbox" checked={checked} onChange={(event) => onChange((event.currentTarget as HTMLInputElement).checked)} />
      <span>{label}</span>
    </label>
  );
}

export function Fieldset({ legend, children }: { legend: string; children: ComponentChildren }) {
  return (
    <fieldset>
      <legend>{legend}</legend>
      {children}
    </fieldset>
  );
}

/** One entry per line (IP rules, JSONPath lists). */
export const lines = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');

/** An optional whole number: empty is null. */
export const optionalNumber = (text: string) => (text.trim() === '' ? null : Number(text));

/**
 * `Name: value` (or `name=value`) per line; a line without the separator is sent as a name with an empty
 * value, for the API to judge.
 */
export function pairMap(text: string, separator: ':' | '='): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const at = line.indexOf(separator);
    pairs[(at < 0 ? line : line.slice(0, at)).trim()] = at < 0 ? '' : line.slice(at + 1).trim();
  }
  return pairs;
}

/** The inverse of `pairMap`, for a form that starts from a stored value. */
export const pairText = (pairs: Record<string, string>, separator: ':' | '=') =>
  Object.entries(pairs)
    .map(([name, value]) => `${name}${separator}${separator === ':' ? ' ' : ''}${value}`)
    .join('\n');
