import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../../libs/config/config.js';
import { createLogger, type Logger } from '../../libs/logging/logger.js';
import { createSecretBox } from '../../libs/secrets/secret-box.js';
import { loadOrCreateKeyFile } from '../../libs/secrets/key-file.js';
import { openStore, type Store } from '../../libs/store/store.js';
import { createApiApp } from '../api/api-app.js';
import { bootstrapOrganization, type BootstrapResult } from './bootstrap.js';

export interface RunningRelay {
  url: string;
  port: number;
  store: Store;
  bootstrap: BootstrapResult;
  close(): Promise<void>;
}

export interface RelayOptions {
  logger?: Logger;
}

/** The composition root: wires config, store, broker and metrics into the roles this process runs. */
export async function startRelay(config: Config, options: RelayOptions = {}): Promise<RunningRelay> {
  const logger = options.logger ?? createLogger({ level: config.logLevel });
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    if (config.databaseUrl && !config.encryptionKey) {
      logger.warn('RELAY_ENCRYPTION_KEY is not set: secrets are sealed with a key file in RELAY_DATA_DIR, which other machines sharing this database cannot read');
    }
    const secrets = createSecretBox(config.encryptionKey ?? (await loadOrCreateKeyFile(config.dataDir)));
    const bootstrap = await bootstrapOrganization(store, config, logger);
    const api = createApiApp({ store, secrets, publicUrl: config.publicUrl, logger, now: Date.now });
    const server = http.createServer(api.callback());
    server.headersTimeout = 30_000;
    server.requestTimeout = 120_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => resolve());
    });
    const port = (server.address() as AddressInfo).port;
    const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
    return {
      url: `http://${host}:${port}`,
      port,
      store,
      bootstrap,
      async close() {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        });
        await store.close();
      },
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}
