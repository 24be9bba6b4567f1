import type { OrgScopedRepository } from '../store/org-scoped-repository.js';

/** `My Shop (EU)` becomes `my-shop-eu`; a name with no usable characters becomes `destination`. */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
    .replace(/-+$/, '');
  return slug || 'destination';
}

/** The base slug, or the first free `base-N` (the rename rule of imports too). */
export async function uniqueSlug(
  repository: OrgScopedRepository<{ id: string; orgId: string; createdAt: number; slug: string }>,
  orgId: string,
  base: string,
): Promise<string> {
  const taken = new Set(
    (await repository.findBy(orgId)).map((row) => row.slug).filter((slug) => slug === base || slug.startsWith(`${base}-`)),
  );
  return firstFreeSlug(base, taken);
}

/** `base` when it is not taken, else the first of `base-1`, `base-2`, ... that is not. */
export function firstFreeSlug(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(base)) return base;
  for (let n = 1; ; n += 1) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}
