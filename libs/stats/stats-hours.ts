/** Destination statistics are kept per hour of attempt start (`destination_hourly_stats`). */
export const HOUR_MS = 3_600_000;

export const hourStart = (ms: number) => ms - (ms % HOUR_MS);
