import type { RoleBuilder } from '../../libs/roles/role.js';
import { loadConsoleAssets } from './console-assets.js';
import { consoleRouter } from './console-router.js';

/** The web console at `/console`: static assets that call the management API with the user's key. */
export const buildConsoleRole: RoleBuilder = async () => ({
  name: 'console',
  routes: [consoleRouter(await loadConsoleAssets())],
  start: async () => {},
  stop: async () => {},
});
