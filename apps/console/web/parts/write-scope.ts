import { ApiError, type Api } from '../api.js';

/**
 * Whether the key may write, learned without writing anything: creating a source from an empty body
 * is refused whatever the key. A `read` key is refused for its scope first (`403 FORBIDDEN`, DESIGN
 * "API keys and scopes"); a key that may write gets `400` for the missing fields, and nothing changes.
 */
export async function keyCanWrite(api: Api): Promise<boolean> {
  try {
    await api.send('POST', '/sources', {});
    return true;
  } catch (error) {
    return !(error instanceof ApiError && error.status === 403);
  }
}
