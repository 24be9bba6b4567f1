import { useId, useRef } from 'preact/hooks';

const INDENT = '  ';

/**
 * A monospace textarea for code: Tab indents instead of leaving the field. Escape, then Tab, leaves it
 * (so the keyboard is never trapped); Shift+Tab always moves back.
 */
export function CodeEditor({ label, value, onInput, readOnly }: { label: string; value: string; onInput(value: string): void; readOnly?: boolean }) {
  const id = useId();
  const escaped = useRef(false);
  const keyDown = (event: KeyboardEvent) => {
    const leaving = escaped.current;
    escaped.current = event.key === 'Escape';
    if (event.key !== 'Tab' || event.shiftKey || leaving || readOnly) return;
    event.preventDefault();
    const area = event.currentTarget as HTMLTextAreaElement;
    // setRangeText keeps the caret after the inserted text, which a re-rendered value would not.
    area.setRangeText(INDENT, area.selectionStart, area.selectionEnd, 'end');
    onInput(area.value);
  };
  return (
    <div class="field code-field">
      <label for={id}>{label}</label>
      <textarea
        id={id}
        class="code"
        rows={16}
        value={value}
        readOnly={readOnly}
        spellcheck={false}
        aria-describedby={`${id}-hint`}
        onKeyDown={keyDown}
        onInput={(event) => onInput((event.currentTarget as HTMLTextAreaElement).value)}
      />
      <small id={`${id}-hint`}>Tab indents; press Escape, then Tab, to leave the editor.</small>
    </div>
  );
}
