/** Epoch milliseconds as the API's ISO 8601 timestamps. */
export const isoTime = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
