import { useState } from 'preact/hooks';

/** Copies `text`; the clipboard API needs a secure context, so plain-HTTP hosts get the text selected instead. */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
    } catch {
      prompt('Copy this value', text);
    }
  };
  return (
    <button type="button" onClick={copy} aria-label={label}>
      {copied ? 'Copied' : 'Copy'}
    </button>
  );
}
