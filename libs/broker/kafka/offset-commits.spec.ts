import { expect } from 'chai';
import { OffsetCommits, type PartitionOffset } from './offset-commits.js';

/** What kafkajs throws for a protocol error it would retry itself, such as a coordinator moving. */
class RetriableCommitError extends Error {
  readonly retriable = true;
}

/** The group coordinator's side of OffsetCommit: it answers each request with the next planned failure, then accepts. */
function coordinator(failures: Error[]) {
  const committed: PartitionOffset[][] = [];
  return {
    committed,
    async commitOffsets(offsets: PartitionOffset[]) {
      const failure = failures.shift();
      if (failure) throw failure;
      committed.push(offsets);
    },
  };
}

/** Lets the commits' own promise chain run until `done` holds. */
async function waitUntil(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setImmediate(resolve));
}

const at = (partition: number, offset: string): PartitionOffset => ({ topic: 't', partition, offset });

/** Commits against a coordinator that fails as planned, remembering what was given up on. */
function commitsAgainst(failures: Error[], attempts?: number) {
  const group = coordinator(failures);
  const givenUp: PartitionOffset[][] = [];
  const commits = new OffsetCommits(group, { intervalMs: 1, attempts, onFailure: (_error, offsets) => givenUp.push(offsets) });
  return { group, givenUp, commits };
}

describe('OffsetCommits', function () {
  it('tries a retriable failure again and commits', async function () {
    const { group, givenUp, commits } = commitsAgainst([new RetriableCommitError('NOT_COORDINATOR')]);
    commits.add(at(0, '4'));
    await commits.flush();
    expect(group.committed).to.deep.equal([[at(0, '4')]]);
    expect(givenUp).to.deep.equal([]);
  });

  it('gives up at once on a failure that is not retriable, and says which offsets', async function () {
    const { group, givenUp, commits } = commitsAgainst([new Error('GROUP_AUTHORIZATION_FAILED')]);
    commits.add(at(0, '4'));
    await commits.flush();
    expect(group.committed).to.deep.equal([]);
    expect(givenUp).to.deep.equal([[at(0, '4')]]);
  });

  it('gives up after its attempts', async function () {
    const { group, givenUp, commits } = commitsAgainst([1, 2, 3].map(() => new RetriableCommitError('REBALANCE_IN_PROGRESS')), 3);
    commits.add(at(0, '4'));
    await commits.flush();
    expect(group.committed).to.deep.equal([]);
    expect(givenUp).to.deep.equal([[at(0, '4')]]);
  });

  it('tries again only the partitions a group join left with this member', async function () {
    const { group, commits } = commitsAgainst([new RetriableCommitError('REBALANCE_IN_PROGRESS')]);
    commits.assigned(() => true);
    commits.add(at(0, '4'));
    commits.add(at(1, '9'));
    const flushed = commits.flush();
    // The rebalance the failure announced ends before the retry: partition 1 went to another member.
    commits.assigned((_topic, partition) => partition === 0);
    await flushed;
    expect(group.committed).to.deep.equal([[at(0, '4')]]);
  });

  it('keeps the latest handled offset of each partition for the next commit', async function () {
    const group = coordinator([]);
    const commits = new OffsetCommits(group, { intervalMs: 60_000, onFailure: () => undefined });
    commits.add(at(0, '4'));
    commits.add(at(0, '7'));
    commits.add(at(2, '1'));
    await commits.flush();
    expect(group.committed).to.deep.equal([[at(0, '7'), at(2, '1')]]);
  });

  it('keeps what it gave up on as uncommitted progress, for the next join to read on from and commit', async function () {
    const { group, givenUp, commits } = commitsAgainst([new Error('Consumer group was not initialized, consumer#run must be called first')]);
    commits.add(at(0, '4'));
    commits.add(at(1, '9'));
    await commits.flush();
    expect(givenUp).to.deep.equal([[at(0, '4'), at(1, '9')]]);
    expect([commits.uncommitted('t', 0), commits.uncommitted('t', 1)]).to.deep.equal(['4', '9']);
    // kafkajs has restarted the consumer and joined again; partition 1 went to another member.
    commits.assigned((_topic, partition) => partition === 0);
    expect([commits.uncommitted('t', 0), commits.uncommitted('t', 1)]).to.deep.equal(['4', undefined]);
    await commits.flush();
    expect(group.committed).to.deep.equal([[at(0, '4')]]);
    expect(commits.uncommitted('t', 0), 'once committed').to.equal(undefined);
  });

  it('remembers a later handled offset than the one a commit in flight carries', async function () {
    let answer: () => void = () => undefined;
    const sent: PartitionOffset[][] = [];
    const slowGroup = { commitOffsets: (offsets: PartitionOffset[]) => new Promise<void>((resolve) => (sent.push(offsets), (answer = resolve))) };
    const commits = new OffsetCommits(slowGroup, { intervalMs: 60_000, onFailure: () => undefined });
    commits.add(at(0, '4'));
    const first = commits.flush();
    await waitUntil(() => sent.length === 1);
    commits.add(at(0, '7'));
    answer();
    await first;
    expect(commits.uncommitted('t', 0)).to.equal('7');
  });

  it('hands its uncommitted progress to the commits of a consumer started in its place, which a join then commits', async function () {
    const { commits } = commitsAgainst([new Error('The coordinator is not aware of this member')]);
    commits.add(at(0, '4'));
    await commits.flush();
    const group = coordinator([]);
    const successor = new OffsetCommits(group, { intervalMs: 1, progress: commits.progress(), onFailure: () => undefined });
    expect(successor.uncommitted('t', 0)).to.equal('4');
    successor.assigned(() => true);
    await successor.flush();
    expect(group.committed).to.deep.equal([[at(0, '4')]]);
  });
});
