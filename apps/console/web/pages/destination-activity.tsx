import type { Page } from '../api.js';
import { useConsole } from '../parts/console-context.js';
import { ErrorMessage } from '../parts/error-message.js';
import { HourlyChart } from '../parts/hourly-chart.js';
import { useLoad } from '../parts/use-load.js';

const HOUR_MS = 3_600_000;
/** Each source costs 24 counting calls; a destination fed by more is charted from its first ones. */
const CHARTED_SOURCES = 3;

interface Route {
  sourceId: string;
}

/**
 * The API has no per-destination time series (health is one 24-hour total) and the console adds no
 * endpoint of its own, so the chart counts what reached the destination's routed sources per hour,
 * from the events list's totals (docs/decisions/0038-web-console.md).
 */
export function DestinationActivity({ destinationId }: { destinationId: string }) {
  const { api } = useConsole();
  const activity = useLoad(async () => {
    const routes = await api.get<Page<Route>>('/routes', { destinationId, pageSize: 100 });
    const sourceIds = [...new Set(routes.data.map((route) => route.sourceId))].slice(0, CHARTED_SOURCES);
    const firstHour = Math.floor(Date.now() / HOUR_MS) * HOUR_MS - 23 * HOUR_MS;
    const hours = Array.from({ length: 24 }, (_, i) => firstHour + i * HOUR_MS);
    const count = (sourceId: string, from: number) =>
      api
        .get<Page<unknown>>('/events', { sourceId, from: new Date(from).toISOString(), to: new Date(from + HOUR_MS - 1).toISOString(), pageSize: 1 })
        .then((page) => page.pagination.total);
    const counts = await Promise.all(hours.map(async (from) => (await Promise.all(sourceIds.map((id) => count(id, from)))).reduce((a, b) => a + b, 0)));
    return { hours, counts, sources: sourceIds.length };
  }, [destinationId]);
  return (
    <div class="panel">
      <h2>Last 24 hours</h2>
      <ErrorMessage error={activity.error} />
      {activity.loading && <p>Loading…</p>}
      {activity.data &&
        (activity.data.sources === 0 ? (
          <p>No route leads here yet.</p>
        ) : (
          <HourlyChart hours={activity.data.hours} counts={activity.data.counts} label="Events received per hour from the routed sources" />
        ))}
    </div>
  );
}
