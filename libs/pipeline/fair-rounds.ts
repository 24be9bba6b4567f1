/** What the first round of a batch takes of each organization's records; each later round takes twice as many. */
export const FIRST_ROUND_SHARE = 16;

/**
 * A batch's records in rounds that serve organizations in turn: the first round takes up to `firstShare`
 * records of each organization, each later round twice as many of each as the round before, and an
 * organization alone in what is left gets all of it in one round. A consumer handles the rounds one after
 * another, each in its own transaction, so an organization with a few records in a batch waits for at most
 * `firstShare` of anyone else's, however many the others sent; a batch of one organization stays one round,
 * and a batch of many takes a few more rounds than one (the shares double), not one round per record.
 * Each organization's records keep their order (and with it each source's).
 */
export function fairRounds<T>(records: readonly T[], organizationOf: (record: T) => string, firstShare = FIRST_ROUND_SHARE): T[][] {
  const byOrganization = new Map<string, T[]>();
  for (const record of records) {
    const organization = organizationOf(record);
    const own = byOrganization.get(organization);
    if (own) own.push(record);
    else byOrganization.set(organization, [record]);
  }
  if (byOrganization.size <= 1) return records.length > 0 ? [[...records]] : [];
  const rounds: T[][] = [];
  let taken = 0;
  for (let share = firstShare; ; share *= 2) {
    const left = [...byOrganization.values()].filter((own) => own.length > taken);
    if (left.length === 0) return rounds;
    if (left.length === 1) return [...rounds, left[0]!.slice(taken)];
    rounds.push(left.flatMap((own) => own.slice(taken, taken + share)));
    taken += share;
  }
}

/**
 * A consumer's batch in fair rounds, each record decoded once: `decoded` gives a record's value, decoding
 * (and throwing) anew only for a record that could not be decoded, which stands in a round of its own kind
 * for the poison isolation to set aside.
 */
export function decodedRounds<R, T>(records: readonly R[], decode: (record: R) => T, organizationOf: (value: T) => string): { rounds: R[][]; decoded(record: R): T } {
  const values = new Map<R, T>();
  const rounds = fairRounds(records, (record) => {
    try {
      const value = decode(record);
      values.set(record, value);
      return organizationOf(value);
    } catch {
      return '';
    }
  });
  return { rounds, decoded: (record) => (values.has(record) ? values.get(record)! : decode(record)) };
}
