import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AttemptRecord } from '../../libs/pipeline/attempt-record.js';
import { claimDeliveredJournal, openDeliveredJournal } from './delivered-journal.js';

const delivered = (deliveryId: string, attemptNumber = 1): AttemptRecord => ({
  attemptId: `att_${deliveryId}_${attemptNumber}`,
  deliveryId,
  eventId: `evt_${deliveryId}`,
  orgId: 'org_1',
  destinationId: 'dst_1',
  attemptNumber,
  startedAt: 1_000,
  completedAt: 1_010,
  ok: true,
  statusCode: 200,
  latencyMs: 10,
  error: null,
  errorKind: null,
  responseBody: 'ok',
  deliveryStatus: 'delivered',
  nextAttemptAt: null,
});

describe('deliverer: the journal of delivered attempts', function () {
  let dir: string;

  beforeEach(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-journal-'));
  });

  afterEach(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("gives the next deliverer an earlier one's delivered attempt of a job's attempt or a later one, never its own", function () {
    const killed = openDeliveredJournal(dir, 'main');
    killed.write(delivered('dlv_a', 2));
    // No close: the process was killed after the write.
    const next = openDeliveredJournal(dir, 'main');
    next.write(delivered('dlv_b'));

    expect(next.earlier({ deliveryId: 'dlv_a', attemptNumber: 1 })).to.deep.equal(delivered('dlv_a', 2));
    expect(next.earlier({ deliveryId: 'dlv_a', attemptNumber: 2 })).to.deep.equal(delivered('dlv_a', 2));
    expect(next.earlier({ deliveryId: 'dlv_a', attemptNumber: 3 })).to.equal(undefined);
    expect(next.earlier({ deliveryId: 'dlv_b', attemptNumber: 1 })).to.equal(undefined);
    expect(openDeliveredJournal(dir, 'main').earlier({ deliveryId: 'dlv_b', attemptNumber: 1 })).to.deep.equal(delivered('dlv_b'));
  });

  it('reads the journals of every deliverer that ran on the data directory (the pipeline threads)', function () {
    openDeliveredJournal(dir, 'pipeline-0').write(delivered('dlv_a'));
    openDeliveredJournal(dir, 'pipeline-1').write(delivered('dlv_b'));

    const next = openDeliveredJournal(dir, 'main');
    expect(next.earlier({ deliveryId: 'dlv_a', attemptNumber: 1 })?.attemptId).to.equal('att_dlv_a_1');
    expect(next.earlier({ deliveryId: 'dlv_b', attemptNumber: 1 })?.attemptId).to.equal('att_dlv_b_1');
  });

  it('leaves out a line torn by a kill during its write, and starts the next write on a line of its own', function () {
    openDeliveredJournal(dir, 'main').write(delivered('dlv_a'));
    fs.appendFileSync(path.join(dir, 'delivered-attempts.main.jsonl'), JSON.stringify(delivered('dlv_torn')).slice(0, 40));

    const next = openDeliveredJournal(dir, 'main');
    next.write(delivered('dlv_b'));
    expect(next.earlier({ deliveryId: 'dlv_a', attemptNumber: 1 })?.attemptId).to.equal('att_dlv_a_1');
    expect(next.earlier({ deliveryId: 'dlv_torn', attemptNumber: 1 })).to.equal(undefined);
    expect(openDeliveredJournal(dir, 'main').earlier({ deliveryId: 'dlv_b', attemptNumber: 1 })?.attemptId).to.equal('att_dlv_b_1');
  });

  it('keeps the attempts of its current file and the one before, at most twice a file in all', function () {
    const journal = openDeliveredJournal(dir, 'main', { fileAttempts: 2 });
    for (const id of ['dlv_1', 'dlv_2', 'dlv_3', 'dlv_4', 'dlv_5']) journal.write(delivered(id));

    const next = openDeliveredJournal(dir, 'main', { fileAttempts: 2 });
    const kept = ['dlv_1', 'dlv_2', 'dlv_3', 'dlv_4', 'dlv_5'].filter((id) => next.earlier({ deliveryId: id, attemptNumber: 1 }));
    expect(kept).to.deep.equal(['dlv_3', 'dlv_4', 'dlv_5']);
    expect(fs.readdirSync(dir).sort()).to.deep.equal(['delivered-attempts.main.jsonl', 'delivered-attempts.main.old.jsonl']);
  });

  it('goes on when a write fails, unjournaled, says so once a streak, and journals again once writes succeed', function () {
    const failures: unknown[] = [];
    const journal = openDeliveredJournal(dir, 'main', { fileAttempts: 1, onWriteFailed: (error) => failures.push(error) });
    journal.write(delivered('dlv_a'));
    // The rotation cannot rename the current file over a directory: each write fails until it can.
    const old = path.join(dir, 'delivered-attempts.main.old.jsonl');
    fs.mkdirSync(path.join(old, 'taken'), { recursive: true });
    journal.write(delivered('dlv_b'));
    journal.write(delivered('dlv_c'));
    expect(failures).to.have.length(1);
    expect((failures[0] as NodeJS.ErrnoException).code).to.be.oneOf(['EISDIR', 'ENOTEMPTY', 'EEXIST']);

    fs.rmSync(old, { recursive: true });
    journal.write(delivered('dlv_d'));
    const next = openDeliveredJournal(dir, 'main');
    const kept = ['dlv_a', 'dlv_b', 'dlv_c', 'dlv_d'].filter((id) => next.earlier({ deliveryId: id, attemptNumber: 1 }));
    expect(kept).to.deep.equal(['dlv_a', 'dlv_d']);
  });

  it('is claimed by one deliverer at a time (Kafka processes sharing a data directory), and by the next once that one closes it', function () {
    const first = claimDeliveredJournal(dir, 'main');
    first!.write(delivered('dlv_a'));
    expect(claimDeliveredJournal(dir, 'main'), 'a second claim while the first holds it').to.equal(undefined);
    const thread = claimDeliveredJournal(dir, 'pipeline-0');
    expect(thread?.earlier({ deliveryId: 'dlv_a', attemptNumber: 1 })?.attemptId, "another name's claim reads the held one").to.equal('att_dlv_a_1');

    first!.close();
    thread!.close();
    const next = claimDeliveredJournal(dir, 'main');
    expect(next?.earlier({ deliveryId: 'dlv_a', attemptNumber: 1 })?.attemptId).to.equal('att_dlv_a_1');
    next!.close();
  });
});
