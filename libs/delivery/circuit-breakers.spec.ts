import { expect } from 'chai';
import { hang, respond, startHttpSink, type HttpSink } from '../testing/http-sink.js';
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
  let sink: HttpSink;
  let sender: HttpSender;
  let breakers: CircuitBreakers;
  let changes: Array<[string, CircuitState]>;
  let changed: (() => void) | undefined;

  const request = () => ({ method: 'POST' as const, url: sink.url, headers: {}, body: Buffer.from('{}') });
  const attempt = (timeoutMs = 5000) => () => sender.send(request(), { timeoutMs });

  beforeEach(async () => {
    sink = await startHttpSink();
    sender = createHttpSender({ blockPrivateDestinations: false });
    changes = [];
    breakers = createCircuitBreakers({
      volumeThreshold: 3,
      resetTimeoutMs: 300,
      onStateChange: (destinationId, state) => {
        changes.push([destinationId, state]);
        changed?.();
      },
    });
  });
  afterEach(async () => {
    breakers.shutdown();
    await sender.close();
    await sink.close();
  });

  /** Resolves with the next state change (mocha's timeout fails the test if none comes). */
  function nextChange(): Promise<[string, CircuitState]> {
    const seen = changes.length;
    return new Promise((resolve) => {
      changed = () => {
        if (changes.length <= seen) return;
        changed = undefined;
        resolve(changes[seen]!);
      };
    });
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

  it('half-opens after resetTimeout and closes when the trial attempt succeeds', async () => {
    sink.setBehaviour([respond(500)]);
    for (let i = 0; i < 3; i++) await breakers.run('dst_a', attempt());
    expect(await nextChange()).to.deep.equal(['dst_a', 'half_open']);
    expect(breakers.circuitState('dst_a')).to.equal('half_open');
    sink.setBehaviour([respond(200)]);
    const trial = await breakers.run('dst_a', attempt());
    expect(trial.kind === 'sent' && trial.outcome.ok).to.equal(true);
    expect(breakers.circuitState('dst_a')).to.equal('closed');
    expect(changes.map(([, state]) => state)).to.deep.equal(['open', 'half_open', 'closed']);
  });

  it('lets a single trial through while half open and opens again when it fails', async () => {
    sink.setBehaviour([respond(500)]);
    for (let i = 0; i < 3; i++) await breakers.run('dst_a', attempt());
    await nextChange();
    sink.setBehaviour([respond(500, { delayMs: 100 })]);
    const [trial, concurrent] = await Promise.all([breakers.run('dst_a', attempt()), breakers.run('dst_a', attempt())]);
    expect(trial.kind === 'sent' && trial.outcome.statusCode).to.equal(500);
    expect(concurrent).to.deep.equal({ kind: 'circuit_open' });
    expect(breakers.circuitState('dst_a')).to.equal('open');
    expect(changes.map(([, state]) => state)).to.deep.equal(['open', 'half_open', 'open']);
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

  it('forgets a deleted destination, whose next breaker starts closed', async () => {
    sink.setBehaviour([respond(500)]);
    for (let i = 0; i < 3; i++) await breakers.run('dst_a', attempt());
    breakers.forget('dst_a');
    expect(breakers.circuitState('dst_a')).to.equal('closed');
    expect((await breakers.run('dst_a', attempt())).kind).to.equal('sent');
  });
});
