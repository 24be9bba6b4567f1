import { NotFoundError } from '../errors/errors.js';
import type { Store } from '../store/store.js';
import type { TransferKind, TransferRow } from './transfer-kind.js';

/**
 * The organization's rows with these ids. Any id that is unknown or another organization's makes the whole
 * request 404, naming every such id, so a list with a typo changes nothing rather than part of what was meant.
 */
export async function requireOwnRows<Row extends TransferRow>(
  store: Store,
  orgId: string,
  kind: TransferKind<Row, unknown>,
  ids: readonly string[],
): Promise<Row[]> {
  const rows = await kind.repository(store).findByIds(orgId, [...ids]);
  const found = new Set(rows.map((row) => row.id));
  const missing = ids.filter((id) => !found.has(id));
  if (missing.length > 0) {
    const noun = missing.length === 1 ? kind.noun : `${kind.noun}s`;
    throw new NotFoundError(`${noun} not found: ${missing.join(', ')}`);
  }
  return rows;
}
