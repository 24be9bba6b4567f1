import { expect } from 'chai';
import { decodedRounds, fairRounds } from './fair-rounds.js';

/** Records named by organization and number: `a3` is organization a's fourth. */
const records = (counts: Record<string, number>) => Object.entries(counts).flatMap(([organization, count]) => Array.from({ length: count }, (_, n) => `${organization}${n}`));
const organizationOf = (record: string) => record[0]!;
const rounds = (batch: string[], firstShare = 2) => fairRounds(batch, organizationOf, firstShare);

describe('fairRounds', () => {
  it('keeps a batch of one organization as one round, in its order', () => {
    expect(rounds(records({ a: 7 }))).to.deep.equal([records({ a: 7 })]);
    expect(rounds([])).to.deep.equal([]);
  });

  it("puts an organization's few records in the first round, beside at most the first share of another's many", () => {
    const batch = [...records({ a: 20 }), 'b0'];
    const [first] = rounds(batch);
    expect(first).to.deep.equal(['a0', 'a1', 'b0']);
  });

  it('doubles the share each round, and gives an organization left alone the rest in one round', () => {
    expect(rounds(records({ a: 20, b: 5 }))).to.deep.equal([
      ['a0', 'a1', 'b0', 'b1'],
      ['a2', 'a3', 'a4', 'a5', 'b2', 'b3', 'b4'],
      records({ a: 20 }).slice(6),
    ]);
  });

  it("keeps each organization's records in the order received, whatever the interleaving of the batch", () => {
    const batch = ['a0', 'b0', 'a1', 'c0', 'a2', 'b1', 'a3', 'a4', 'c1', 'a5'];
    const handled = rounds(batch).flat();
    expect(handled).to.have.members(batch);
    for (const organization of ['a', 'b', 'c']) expect(handled.filter((record) => organizationOf(record) === organization)).to.deep.equal(batch.filter((record) => organizationOf(record) === organization));
  });

  it('takes a few rounds for a batch of 500 from many organizations, not one a record', () => {
    const batch = records({ a: 400, b: 60, c: 30, d: 10 });
    expect(fairRounds(batch, organizationOf, 16).map((round) => round.length)).to.deep.equal([16 + 16 + 16 + 10, 32 + 32 + 14, 64 + 12, 400 - 112]);
  });

  it('decodes each record once, and leaves one that does not decode to a round where decoding it throws again', () => {
    let decodes = 0;
    const decode = (record: string) => {
      decodes += 1;
      if (record === 'bad') throw new SyntaxError('not a record');
      return { organization: organizationOf(record), record };
    };
    const batch = [...records({ a: 20 }), 'bad', 'b0'];
    const { rounds, decoded } = decodedRounds(batch, decode, (value) => value.organization);
    expect(rounds[0]).to.include.members(['b0', 'bad']);
    expect(decoded('a19')).to.deep.equal({ organization: 'a', record: 'a19' });
    expect(decodes).to.equal(batch.length);
    expect(() => decoded('bad')).to.throw(SyntaxError);
  });
});
