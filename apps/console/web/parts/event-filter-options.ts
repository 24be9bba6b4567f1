/** Choices shared by the events filters and the replay filter (the same query fields). */
export const EVENT_STATUS_OPTIONS = [{ value: '', label: 'any' }, ...['pending', 'delivered', 'partial', 'failed'].map((status) => ({ value: status, label: status }))];

export const SIGNATURE_OPTIONS = [
  { value: '', label: 'any' },
  { value: 'true', label: 'valid' },
  { value: 'false', label: 'invalid' },
];

/** A `datetime-local` value (the browser's zone) as the API's ISO instant; empty stays unset. */
export const localToIso = (local: string | undefined) => (local ? new Date(local).toISOString() : undefined);

/** An ISO instant as a `datetime-local` value in the browser's zone, to the second. */
export const isoToLocal = (iso: string) => {
  const at = new Date(iso);
  return new Date(at.getTime() - at.getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
};
