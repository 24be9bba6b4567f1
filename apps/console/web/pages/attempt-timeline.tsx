import { ms, when } from '../parts/format.js';

export interface Timeline {
  received: string;
  validated: string;
  queued: string;
  totalDuration: number;
  deliveries: {
    deliveryId: string;
    destinationId: string;
    destinationName: string;
    status: string;
    attempts: { attemptNumber: number; startedAt: string; completedAt: string; status: string; statusCode: number | null; latency: number | null; error?: string }[];
  }[];
}

const LANE = 28;
const LABEL = 180;
const WIDTH = 900;

/**
 * One lane per delivery (a replay adds a lane), each attempt a bar from its start to its answer on a
 * shared time axis from receipt. The same facts follow as a list, for screen readers and copying.
 */
export function AttemptTimeline({ timeline }: { timeline: Timeline }) {
  const start = Date.parse(timeline.received);
  const span = Math.max(1, timeline.totalDuration);
  const x = (iso: string) => LABEL + ((Date.parse(iso) - start) / span) * (WIDTH - LABEL - 10);
  const height = LANE * (timeline.deliveries.length + 1) + 20;
  return (
    <figure class="timeline">
      <svg viewBox={`0 0 ${WIDTH} ${height}`} role="img" aria-label={`Timeline: ${timeline.deliveries.length} deliveries over ${ms(timeline.totalDuration)}`}>
        <text x={4} y={18}>
          received → queued
        </text>
        <line x1={x(timeline.received)} x2={x(timeline.queued)} y1={14} y2={14} class="queued" />
        {timeline.deliveries.map((delivery, lane) => {
          const y = LANE * (lane + 1) + 6;
          return (
            <g key={delivery.deliveryId}>
              <text x={4} y={y + 14}>
                {delivery.destinationName.slice(0, 22)} #{lane + 1}
              </text>
              {delivery.attempts.map((attempt) => (
                <rect
                  key={attempt.attemptNumber}
                  x={x(attempt.startedAt)}
                  y={y}
                  width={Math.max(4, x(attempt.completedAt) - x(attempt.startedAt))}
                  height={LANE - 10}
                  class={`attempt attempt-${attempt.status}`}
                >
                  <title>
                    Attempt {attempt.attemptNumber}: {attempt.status} {attempt.statusCode ?? ''} in {ms(attempt.latency)}
                  </title>
                </rect>
              ))}
            </g>
          );
        })}
        <text x={WIDTH - 10} y={height - 4} text-anchor="end">
          {ms(timeline.totalDuration)}
        </text>
      </svg>
      <figcaption>
        Received {when(timeline.received)}, queued after {ms(Date.parse(timeline.queued) - start)}.
        <ol class="attempts" aria-label="Deliveries and their attempts">
          {timeline.deliveries.map((delivery, lane) => (
            <li key={delivery.deliveryId}>
              Delivery {lane + 1} to {delivery.destinationName} ({delivery.status}):{' '}
              {delivery.attempts.length === 0
                ? 'no attempt yet'
                : delivery.attempts
                    .map((a) => `attempt ${a.attemptNumber} ${a.status}${a.statusCode ? ` ${a.statusCode}` : ''} after ${ms(Date.parse(a.startedAt) - start)}${a.error ? ` (${a.error})` : ''}`)
                    .join('; ')}
            </li>
          ))}
        </ol>
      </figcaption>
    </figure>
  );
}
