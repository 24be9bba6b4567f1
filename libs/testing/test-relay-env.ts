/**
 * What every relay a test or bench starts needs beside its backends: it delivers to sinks on 127.0.0.1,
 * which the default refuses (RELAY_BLOCK_PRIVATE_DESTINATIONS), and serves /metrics on a free port
 * (`RunningRelay.metricsUrl`), as relays running side by side cannot share the default 9464. A suite
 * that checks the defaults starts its relay without this.
 */
export const TEST_RELAY_ENV: Readonly<Record<string, string>> = {
  RELAY_BLOCK_PRIVATE_DESTINATIONS: 'false',
  METRICS_PORT: '0',
};
