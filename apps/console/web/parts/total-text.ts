import type { Pagination } from '../api.js';

/** "at least N" when the API says its total is a lower bound (counting millions exactly is too slow). */
export function totalText(pagination: Pagination, noun: string): string {
  const count = pagination.total.toLocaleString('en');
  return pagination.totalExact === false ? `at least ${count} ${noun}` : `${count} ${noun}`;
}

/** Whether a page follows: always while the total is only a lower bound and this page is full. */
export function hasNextPage(pagination: Pagination, rowsOnPage: number): boolean {
  if (pagination.totalExact === false) return rowsOnPage >= pagination.pageSize;
  return pagination.page * pagination.pageSize < pagination.total;
}
