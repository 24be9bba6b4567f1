import type { Page } from '../api.js';
import { useConsole } from '../parts/console-context.js';
import { ErrorMessage } from '../parts/error-message.js';
import { totalText } from '../parts/total-text.js';
import { useLoad } from '../parts/use-load.js';
import { href } from '../route.js';
import type { Destination } from './destination-form.js';

const HOUR_MS = 3_600_000;
/** Circuit states are read per destination (the list omits them); past this many, the overview says so. */
const CIRCUITS_CHECKED = 100;

async function overview(api: ReturnType<typeof useConsole>['api']) {
  const since = (ms: number) => new Date(Date.now() - ms).toISOString();
  const count = (query: Record<string, string>) => api.get<Page<unknown>>('/events', { ...query, pageSize: 1 }).then((page) => page.pagination);
  const [lastHour, lastDay, failedDay, destinations] = await Promise.all([
    count({ from: since(HOUR_MS) }),
    count({ from: since(24 * HOUR_MS) }),
    count({ from: since(24 * HOUR_MS), status: 'failed' }),
    api.get<Page<Destination>>('/destinations', { pageSize: CIRCUITS_CHECKED }),
  ]);
  const details = await Promise.all(destinations.data.map((destination) => api.get<Destination>(`/destinations/${destination.id}`)));
  const attempts = destinations.data.reduce((sum, d) => sum + d.deliveriesCount, 0);
  const delivered = destinations.data.reduce((sum, d) => sum + (d.deliveriesCount * (d.successRate ?? 0)) / 100, 0);
  return {
    lastHour,
    lastDay,
    failedDay,
    attempts,
    successRatio: attempts === 0 ? null : Math.round((delivered / attempts) * 1000) / 10,
    openCircuits: details.filter((d) => d.circuitState && d.circuitState !== 'closed'),
    destinationsTotal: destinations.pagination.total,
  };
}

export function OverviewPage() {
  const { api } = useConsole();
  const figures = useLoad(() => overview(api), []);
  const data = figures.data;
  return (
    <section>
      <h1>Overview</h1>
      <button type="button" class="quiet" onClick={figures.reload}>
        Refresh overview
      </button>
      <ErrorMessage error={figures.error} />
      {data && (
        <>
          <div class="cards">
            <div class="card">
              <h2>Ingest rate</h2>
              <p class="figure">{(data.lastHour.total / 60).toFixed(1)} / min</p>
              <p>{totalText(data.lastHour, 'events')} in the last hour</p>
            </div>
            <div class="card">
              <h2>Last 24 hours</h2>
              <p class="figure">{totalText(data.lastDay, 'events')}</p>
              <p>
                <a href={href('/events?status=failed')}>{totalText(data.failedDay, 'failed')}</a>
              </p>
            </div>
            <div class="card">
              <h2>Delivery rate</h2>
              <p class="figure">{(data.attempts / (24 * 60)).toFixed(1)} / min</p>
              <p>{data.attempts} attempts in the last 24 hours</p>
            </div>
            <div class="card">
              <h2>Success ratio</h2>
              <p class="figure">{data.successRatio === null ? '—' : `${data.successRatio}%`}</p>
              <p>of delivery attempts in the last 24 hours</p>
            </div>
          </div>
          <div class="panel">
            <h2>Open circuits</h2>
            {data.openCircuits.length === 0 ? (
              <p>Every destination's circuit is closed.</p>
            ) : (
              <ul>
                {data.openCircuits.map((d) => (
                  <li key={d.id}>
                    <a href={href(`/destinations/${d.id}`)}>{d.name}</a>: {d.circuitState === 'open' ? 'open' : 'half open'}
                  </li>
                ))}
              </ul>
            )}
            {data.destinationsTotal > CIRCUITS_CHECKED && <p>Only the newest {CIRCUITS_CHECKED} destinations were checked.</p>}
          </div>
        </>
      )}
    </section>
  );
}
