import { UnavailableError } from '../../libs/errors/errors.js';
import { within } from '../../libs/time/within.js';

/** One dependency `/readyz` asks after: a name an operator recognizes and a cheap round trip to it. */
export interface ReadinessDependency {
  name: string;
  ping(): Promise<unknown>;
}

export interface ReadinessOptions {
  /** A dependency that has not answered by then counts as down: a probe must answer before the orchestrator's own timeout. */
  timeoutMs?: number;
}

/**
 * The `/readyz` check: every dependency is asked at once; when any fails or does not answer in time, a 503
 * names each failing part, so "not ready" says whether the store or the broker is the one to look at.
 */
export function readinessCheck(dependencies: ReadinessDependency[], options: ReadinessOptions = {}): () => Promise<void> {
  const timeoutMs = options.timeoutMs ?? 2_000;
  return async () => {
    const outcomes = await Promise.all(dependencies.map((dependency) => answers(dependency, timeoutMs)));
    const failing = dependencies.filter((_, index) => !outcomes[index]!.ok);
    if (failing.length === 0) return;
    throw new UnavailableError(
      `Not ready: ${failing.map((dependency) => `the ${dependency.name} is not reachable`).join('; ')}`,
      outcomes.find((outcome) => !outcome.ok)?.error,
      failing.map((dependency) => ({ field: dependency.name, message: 'not reachable' })),
    );
  };
}

async function answers(dependency: ReadinessDependency, timeoutMs: number): Promise<{ ok: boolean; error?: unknown }> {
  try {
    await within(timeoutMs, dependency.ping(), `the ${dependency.name}`);
    return { ok: true };
  } catch (error) {
    return { ok: false, error };
  }
}
