/**
 * Metric names on both sides of the ops files: the series a PromQL expression reads (alert rules,
 * Grafana panels) and the series a `/metrics` exposition offers, so a test can hold one against the other.
 */

const PROMQL_KEYWORDS = new Set([
  'and', 'or', 'unless', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'offset', 'bool', 'inf', 'nan',
]);

/** The metric names an expression selects. Grafana variables (`$destination`, `$__rate_interval`) may appear. */
export function metricNamesInPromql(expr: string): string[] {
  const bare = expr
    // Strings first: label values and label_replace arguments may hold anything.
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const match of bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const before = bare[match.index - 1] ?? ' ';
    // Part of a number (1e3), a duration (offset 5m) or a Grafana variable.
    if (/[0-9.$]/.test(before)) continue;
    const after = bare.slice(match.index + match[0].length).trimStart();
    if (after.startsWith('(')) continue; // a function or aggregation
    if (PROMQL_KEYWORDS.has(match[0].toLowerCase())) continue;
    names.add(match[0]);
  }
  return [...names];
}

/** The metrics a Grafana template query reads: `label_values(metric, label)`, `query_result(expr)` or plain PromQL. */
export function metricNamesInGrafanaVariable(query: string): string[] {
  const call = /^\s*(label_values|query_result)\(([\s\S]*)\)\s*$/.exec(query);
  if (!call) return metricNamesInPromql(query);
  const [, fn, args] = call as unknown as [string, string, string];
  if (fn === 'query_result') return metricNamesInPromql(args);
  // label_values(label) reads no metric; label_values(selector, label) reads the selector's.
  const lastComma = args.lastIndexOf(',');
  return lastComma < 0 ? [] : metricNamesInPromql(args.slice(0, lastComma));
}

/** Every series name a Prometheus text exposition offers, histogram and summary suffixes included. */
export function seriesNamesInExposition(text: string): Set<string> {
  const names = new Set<string>();
  for (const match of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, type] = match as unknown as [string, string, string];
    // A histogram is only queryable through its suffixed series; a summary also by its bare name (quantiles).
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
    else names.add(name);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(name + suffix);
  }
  return names;
}
