// One formatter for every timestamp: building one per call costs more than the rest of a table row.
const DATE_TIME = new Intl.DateTimeFormat('en-GB', { dateStyle: 'short', timeStyle: 'medium', hour12: false });

export const when = (iso: string | null | undefined) => (iso ? DATE_TIME.format(new Date(iso)) : '—');
export const ms = (value: number | null | undefined) => (value === null || value === undefined ? '—' : `${Math.round(value)} ms`);
export const percent = (value: number | null | undefined) => (value === null || value === undefined ? '—' : `${value}%`);
export const json = (value: unknown) => JSON.stringify(value, null, 2);
