import { RelayError } from '../errors/errors.js';

/** What `within` bounded did not answer in time; asking again later may help. */
export class TimedOutError extends RelayError {
  constructor(
    readonly what: string,
    readonly ms: number,
  ) {
    super(503, 'TIMED_OUT', `${what} gave no answer within ${ms} ms`, { retriable: true });
  }
}

/**
 * `promise`, or a TimedOutError naming `what` once `ms` have passed first. The timer is cleared either
 * way, so a settled wait holds no timer (nor the process) open; `promise` itself runs on regardless.
 */
export async function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimedOutError(what, ms)), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
