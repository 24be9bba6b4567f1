import type { Pagination } from '../api.js';
import { hasNextPage, totalText } from './total-text.js';

export function Pager({ pagination, rows, noun, onPage }: { pagination: Pagination; rows: number; noun: string; onPage(page: number): void }) {
  const pages = Math.max(1, Math.ceil(pagination.total / pagination.pageSize));
  return (
    <nav class="pager" aria-label={`Pages of ${noun}`}>
      <button type="button" disabled={pagination.page <= 1} onClick={() => onPage(pagination.page - 1)}>
        Previous page
      </button>
      <span aria-live="polite">
        Page {pagination.page}
        {pagination.totalExact === false ? '' : ` of ${pages}`} · {totalText(pagination, noun)}
      </span>
      <button type="button" disabled={!hasNextPage(pagination, rows)} onClick={() => onPage(pagination.page + 1)}>
        Next page
      </button>
    </nav>
  );
}
