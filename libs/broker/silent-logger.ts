import type { BrokerLogger } from './broker.js';

/** The default when no logger is injected: adapters stay quiet. */
export const silentLogger: BrokerLogger = {
  warn: () => undefined,
  error: () => undefined,
};
