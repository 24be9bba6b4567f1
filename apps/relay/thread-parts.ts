import type { Config } from '../../libs/config/config.js';
import type { Logger } from '../../libs/logging/logger.js';

// What the main thread and its threads both use, apart from relay.ts: a thread that imports only this
// does not load every role's modules (the search indexer's thread).

/** Closes what was opened, last first, once however often it is called. */
export function closerStack(logger: Logger) {
  const closers: (() => Promise<void>)[] = [];
  let closing: Promise<void> | undefined;
  return {
    push: (close: () => Promise<void>) => void closers.push(close),
    closeAll: () =>
      (closing ??= (async () => {
        for (const close of [...closers].reverse()) await close().catch((error) => logger.error({ err: error }, 'error while closing'));
      })()),
  };
}
export type Closers = ReturnType<typeof closerStack>;

/** Where the store is, for each of a process's connections to it, and where their background failures go. */
export function storeOptions(config: Config, logger: Logger) {
  return {
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    onBackgroundError: (error: Error) => logger.warn({ err: error }, 'Background database work failed (an idle connection, or a checkpoint); it is retried'),
  };
}
