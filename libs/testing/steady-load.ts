/** What a steady load achieved: requests started, and those it could not start because too many were in flight. */
export interface LoadFigures {
  started: number;
  skipped: number;
  seconds: number;
}

export interface SteadyLoad {
  /** Stops starting requests and resolves once every started one has settled. */
  stop(): Promise<LoadFigures>;
}

const TICK_MS = 10;

/**
 * An open-loop load: `send(n)` is started `perSecond` times a second whatever the answers take, as
 * providers send, until `stop`. Past `maxInFlight` unanswered requests a due request is skipped and
 * counted, so a stalled server cannot make the generator pile up without bound.
 */
export function startSteadyLoad(perSecond: number, send: (n: number) => Promise<unknown>, maxInFlight = 256): SteadyLoad {
  const startedAt = performance.now();
  const inFlight = new Set<Promise<unknown>>();
  let due = 0;
  let started = 0;
  let skipped = 0;
  const timer = setInterval(() => {
    const target = Math.floor(((performance.now() - startedAt) * perSecond) / 1000);
    for (; due < target; due++) {
      if (inFlight.size >= maxInFlight) {
        skipped++;
        continue;
      }
      const request = send(started++).catch(() => undefined);
      inFlight.add(request);
      void request.then(() => inFlight.delete(request));
    }
  }, TICK_MS);
  return {
    async stop() {
      clearInterval(timer);
      const seconds = (performance.now() - startedAt) / 1000;
      await Promise.all(inFlight);
      return { started, skipped, seconds };
    },
  };
}
