import { expect } from 'chai';
import { hang, respond, startHttpSink, type HttpSink } from '../testing/http-sink.js';
import { ManualTimers } from '../testing/manual-timers.js';
import type { AttemptOutcome } from './attempt-outcome.js';
import { countsAgainstCircuit, createCircuitBreakers, type CircuitBreakers, type CircuitState } from './circuit-breakers.js';
import { createHttpSender, type HttpSender } from './send-request.js';

function outcome(overrides: Partial<AttemptOutcome>): AttemptOutcome {
  return { ok: false, statusCode: null, latencyMs: 1, responseBody: '', responseHeaders: {}, ...overrides };
}

describe('countsAgainstCircuit', () => {
  it('counts timeouts, network errors, 5xx, 408 and 429 as failures', () => {
    for (const failed of [
      outcome({ errorKind: 'timeout' }),
      outcome({ errorKind: 'connect' }),
      outcome({ errorKind: 'reset' }),
      outcome({ errorKind: 'dns' }),
      outcome({ statusCode: 200, errorKind: 'timeout' }),
      outcome({ statusCode: 500, errorKind: 'http_status' }),
      outcome({ statusCode: 503, errorKind: 'http_status' }),
      outcome({ statusCode: 408, errorKind: 'http_status' }),
      outcome({ statusCode: 429, errorKind: 'http_status' }),
    ]) {
      expect(countsAgainstCircuit(failed), JSON.stringify(failed)).to.equal(true);
    }
  });

  it('does not count 2xx, 3xx, other 4xx or a refused address', () => {
    for (const answered of [
      outcome({ ok: true, statusCode: 200 }),
      outcome({ statusCode: 301, errorKind: 'http_status' }),
      outcome({ statusCode: 400, errorKind: 'http_status' }),
      outcome({ statusCode: 401, errorKind: 'http_status' }),
      outcome({ statusCode: 404, errorKind: 'http_status' }),
      outcome({ statusCode: 422, errorKind: 'http_status' }),
      outcome({ errorKind: 'refused_address' }),
    ]) {
      expect(countsAgainstCircuit(answered), JSON.stringify(answered)).to.equal(false);
    }
  });
});

describe('createCircuitBreakers', () => {
  const RESET_TIMEOUT_MS = 300;
  let sink: HttpSink;
  let sender: HttpSender;
  let timers: ManualTimers;
  let breakers: CircuitBreakers;
  let changes: Array<[string, CircuitState]>;

  const request = () => ({ method: 'POST' as const, url: sink.url, headers: {}, body: Buffer.from('{}') });
  const attempt = (timeoutMs = 5000) => () => sender.send(request(), { timeoutMs });
  const states = () => changes.map(([, state]) => state);

  beforeEach(async () => {
    sink = await startHttpSink();
    sender = createHttpSender({ blockPrivateDestinations: false });
    changes = [];
    // The reset timers fire only when a test advances them.
    timers = new ManualTimers();
    breakers = createCircuitBreakers({
      volumeThreshold: 3,
      resetTimeoutMs: RESET_TIMEOUT_MS,
      schedule: timers.schedule,
      now: timers.now,
      onStateChange: (destinationId, state) => changes.push([destinationId, state]),
    });
  });
  afterEach(async () => {
    breakers.shutdown();
    await sender.close();
    await sink.close();
  });

  async function openCircuit(destinationId = 'dst_a'): Promise<void> {
    sink.setBehaviour([respond(500)]);
    for (let i = 0; i < 3; i++) await breakers.run(destinationId, attempt());
    expect(breakers.circuitState(destinationId)).to.equal('open');
  }

  /** Moves time on to the reset timeout, checking that the circuit is still open a millisecond before. */
  function reachResetTimeout(destinationId = 'dst_a'): void {
    timers.advance(RESET_TIMEOUT_MS - 1);
    expect(breakers.circuitState(destinationId), 'a millisecond before the reset timeout').to.equal('open');
    timers.advance(1);
  }

  it('passes the outcome of each attempt through as data, failed ones included', async () => {
    sink.setBehaviour([respond(500, { body: 'boom' }), respond(200, { body: 'fine' })]);
    const failed = await breakers.run('dst_a', attempt());
    expect(failed).to.deep.include({ kind: 'sent' });
    expect(failed.kind === 'sent' && failed.outcome).to.include({ ok: false, statusCode: 500, responseBody: 'boom' });
    const delivered = await breakers.run('dst_a', attempt());
    expect(delivered.kind === 'sent' && delivered.outcome).to.include({ ok: true, responseBody: 'fine' });
  });

  it('opens after failing attempts, then short-circuits without sending', async () => {
    sink.setBehaviour([respond(503)]);
    for (let i = 0; i < 3; i++) await breakers.run('dst_a', attempt());
    expect(breakers.circuitState('dst_a')).to.equal('open');
    expect(changes).to.deep.equal([['dst_a', 'open']]);
    expect(await breakers.run('dst_a', attempt())).to.deep.equal({ kind: 'circuit_open' });
    expect(sink.requests).to.have.length(3);
  });

  it('opens on timeouts', async () => {
    sink.setBehaviour([hang()]);
    for (let i = 0; i < 3; i++) await breakers.run('dst_a', attempt(100));
    expect(breakers.circuitState('dst_a')).to.equal('open');
  });

  it('half-opens exactly at the reset timeout and closes when the trial attempt succeeds', async () => {
    await openCircuit();
    reachResetTimeout();
    expect(breakers.circuitState('dst_a')).to.equal('half_open');
    expect(changes).to.deep.equal([['dst_a', 'open'], ['dst_a', 'half_open']]);
    sink.setBehaviour([respond(200)]);
    const trial = await breakers.run('dst_a', attempt());
    expect(trial.kind === 'sent' && trial.outcome.ok).to.equal(true);
    expect(breakers.circuitState('dst_a')).to.equal('closed');
    expect(states()).to.deep.equal(['open', 'half_open', 'closed']);
    expect(timers.pendingCount, 'no reset left pending').to.equal(0);
  });

  it('lets a single trial through while half open, opens again when it fails, and half-opens again a reset timeout later', async () => {
    await openCircuit();
    timers.advance(RESET_TIMEOUT_MS);
    sink.setBehaviour([respond(500, { delayMs: 100 })]);
    const [trial, concurrent] = await Promise.all([breakers.run('dst_a', attempt()), breakers.run('dst_a', attempt())]);
    expect(trial.kind === 'sent' && trial.outcome.statusCode).to.equal(500);
    expect(concurrent).to.deep.equal({ kind: 'circuit_open' });
    expect(breakers.circuitState('dst_a')).to.equal('open');
    expect(states()).to.deep.equal(['open', 'half_open', 'open']);
    reachResetTimeout();
    expect(breakers.circuitState('dst_a')).to.equal('half_open');
  });

  it('counts on in the same rolling window once half open: a failure soon after closing opens it again', async () => {
    await openCircuit();
    timers.advance(RESET_TIMEOUT_MS);
    sink.setBehaviour([respond(200), respond(500)]);
    await breakers.run('dst_a', attempt());
    expect(breakers.circuitState('dst_a')).to.equal('closed');
    // 4 failures in 5 attempts; a fresh window would hold 2 attempts, under the volume threshold of 3.
    await breakers.run('dst_a', attempt());
    expect(states()).to.deep.equal(['open', 'half_open', 'closed', 'open']);
  });

  it('takes on an open state from elsewhere and half-opens it after the reset timeout; a state it has changes nothing', () => {
    breakers.adopt('dst_a', 'closed');
    breakers.adopt('dst_a', 'open');
    breakers.adopt('dst_a', 'open');
    expect(breakers.circuitState('dst_a')).to.equal('open');
    reachResetTimeout();
    expect(breakers.circuitState('dst_a')).to.equal('half_open');
    expect(states()).to.deep.equal(['open', 'half_open']);
  });

  it('drops the pending reset when the circuit is closed from elsewhere, forgotten or shut down', async () => {
    await openCircuit('dst_a');
    breakers.adopt('dst_b', 'open');
    breakers.adopt('dst_c', 'open');
    expect(timers.pendingCount).to.equal(3);
    breakers.adopt('dst_a', 'closed');
    breakers.forget('dst_b');
    expect(timers.pendingCount).to.equal(1);
    breakers.shutdown();
    expect(timers.pendingCount).to.equal(0);
    expect(changes).to.deep.equal([
      ['dst_a', 'open'],
      ['dst_b', 'open'],
      ['dst_c', 'open'],
      ['dst_a', 'closed'],
    ]);
  });

  it('stays closed on 404s: the destination is up and answering', async () => {
    sink.setBehaviour([respond(404)]);
    for (let i = 0; i < 10; i++) {
      const result = await breakers.run('dst_a', attempt());
      expect(result.kind === 'sent' && result.outcome.statusCode).to.equal(404);
    }
    expect(breakers.circuitState('dst_a')).to.equal('closed');
    expect(changes).to.deep.equal([]);
  });

  it('opens on 429s', async () => {
    sink.setBehaviour([respond(429, { headers: { 'retry-after': '1' } })]);
    for (let i = 0; i < 3; i++) await breakers.run('dst_a', attempt());
    expect(breakers.circuitState('dst_a')).to.equal('open');
  });

  it('keeps destinations apart', async () => {
    sink.setBehaviour((received) => (received.url === '/' ? respond(500) : respond(200)));
    for (let i = 0; i < 3; i++) await breakers.run('dst_a', attempt());
    const other = await breakers.run('dst_b', () => sender.send({ ...request(), url: `${sink.url}/b` }, { timeoutMs: 5000 }));
    expect(other.kind === 'sent' && other.outcome.ok).to.equal(true);
    expect(breakers.circuitState('dst_a')).to.equal('open');
    expect(breakers.circuitState('dst_b')).to.equal('closed');
    expect(breakers.circuitState('dst_unknown')).to.equal('closed');
  });

  describe('evictIdle', () => {
    /** The default rolling window (60 s) and one of its 12 buckets: every count has left the window by then. */
    const IDLE_AFTER_MS = 65_000;

    it('drops a closed breaker that has counted nothing for a window and a bucket; an open or half-open one stays however idle', async () => {
      sink.setBehaviour([respond(200)]);
      await breakers.run('dst_quiet', attempt());
      await openCircuit('dst_down');
      timers.advance(IDLE_AFTER_MS - 1);
      expect(breakers.evictIdle(), 'a millisecond before').to.deep.equal([]);
      timers.advance(1);
      expect(breakers.evictIdle()).to.deep.equal(['dst_quiet']);
      expect(breakers.size).to.equal(1);
      expect(breakers.circuitState('dst_down')).to.equal('half_open');
      timers.advance(10 * IDLE_AFTER_MS);
      expect(breakers.evictIdle(), 'half open, however idle').to.deep.equal([]);
      // The next attempt makes it again, closed.
      sink.setBehaviour([respond(200)]);
      const again = await breakers.run('dst_quiet', attempt());
      expect(again.kind === 'sent' && again.outcome.ok).to.equal(true);
      expect(breakers.circuitState('dst_quiet')).to.equal('closed');
    });

    it('keeps the breaker of an attempt still in flight, and counts idleness from its answer', async () => {
      sink.setBehaviour([hang()]);
      const answered = breakers.run('dst_slow', attempt(200));
      timers.advance(2 * IDLE_AFTER_MS);
      expect(breakers.evictIdle(), 'in flight').to.deep.equal([]);
      await answered;
      expect(breakers.evictIdle(), 'just answered').to.deep.equal([]);
      timers.advance(IDLE_AFTER_MS);
      expect(breakers.evictIdle()).to.deep.equal(['dst_slow']);
      expect(breakers.size).to.equal(0);
    });
  });

  it('forgets a deleted destination, whose next breaker starts closed', async () => {
    sink.setBehaviour([respond(500)]);
    for (let i = 0; i < 3; i++) await breakers.run('dst_a', attempt());
    breakers.forget('dst_a');
    expect(breakers.circuitState('dst_a')).to.equal('closed');
    expect((await breakers.run('dst_a', attempt())).kind).to.equal('sent');
  });
});
