import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

/** A bar per hour; the figures are also given as text for screen readers. */
export function HourlyChart({ hours, counts, label }: { hours: number[]; counts: number[]; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!box.current) return;
    const plot = new uPlot(
      {
        width: Math.min(720, box.current.clientWidth || 720),
        height: 200,
        legend: { show: false },
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        series: [{}, { label, stroke: '#2563eb', fill: 'rgba(37, 99, 235, 0.35)', paths: uPlot.paths.bars!({ size: [0.8, 40] }) }],
        axes: [{}, { size: 50 }],
      },
      [hours.map((at) => at / 1000), counts],
      box.current,
    );
    return () => plot.destroy();
  }, [hours, counts, label]);
  const total = counts.reduce((sum, n) => sum + n, 0);
  return <div ref={box} class="chart" role="img" aria-label={`${label}: ${total} in the last 24 hours, at most ${Math.max(0, ...counts)} in one hour`} />;
}
