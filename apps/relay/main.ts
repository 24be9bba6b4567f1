import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import { loadConfig, ROLES, type Role } from '../../libs/config/config.js';
import { ConfigError, RelayError } from '../../libs/errors/errors.js';
import { createLogger } from '../../libs/logging/logger.js';
import { startRelay } from './relay.js';

/**
 * Each V8 heap grows to at most twice what its last full collection kept, in every thread of the process.
 * V8's own factor reaches 4 when collection is cheap, as it is here, and a relay under load then held
 * 130-160 MB more (docs/decisions/0041-memory-heap-growth.md).
 */
const HEAP_GROWING_PERCENT = 100;

/** `npm start [-- --role gateway|router|deliverer|recorder|api|all]`: reads the environment once and runs. */
async function main(): Promise<void> {
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  const { values } = parseArgs({ options: { role: { type: 'string' } }, allowPositionals: false });
  if (values.role !== undefined && !(ROLES as readonly string[]).includes(values.role)) {
    throw new ConfigError('--role', `must be one of ${ROLES.join(', ')}`);
  }
  const config = loadConfig(process.env, values.role ? { role: values.role as Role } : {});
  const logger = createLogger({ level: config.logLevel });
  const relay = await startRelay(config, { logger });
  const metricsAt = relay.metricsUrl ? `${relay.metricsUrl}/metrics` : 'off (METRICS_PORT)';
  logger.info({ url: relay.url, metricsUrl: relay.metricsUrl, role: config.role, org: relay.bootstrap.org.slug }, `relay listening on ${relay.url}, metrics on ${metricsAt}`);
  if (relay.bootstrap.createdKey) {
    process.stdout.write(
      `\nAPI key for organization "${relay.bootstrap.org.slug}" (shown once, store it now):\n  ${relay.bootstrap.createdKey}\n` +
        `Try: curl -H "Authorization: Bearer ${relay.bootstrap.createdKey}" ${relay.url}/api/sources\n` +
        `Or sign in to the web console: ${relay.url}/console\n\n`,
    );
  }
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => process.exit(1), config.shutdownTimeoutMs).unref();
    await relay.close();
    clearTimeout(deadline);
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((error: unknown) => {
  const message = error instanceof RelayError ? error.message : (error as Error)?.stack ?? String(error);
  process.stderr.write(`relay failed to start: ${message}\n`);
  process.exit(1);
});
