import type { RoleBuilder } from '../../libs/roles/role.js';
import { loadConsoleAssets } from './console-assets.js';
import { consoleRouter } from './console-router.js';

/** The web console at `/console`: static assets that call the management API with the user's key. */
export const buildConsoleRole: RoleBuilder = async ({ config }) => ({
  name: 'console',
  routes: [consoleRouter(await loadConsoleAssets(), { traceUrlTemplate: config.traceUrlTemplate ?? null })],
  start: async () => {},
  stop: async () => {},
});
