import { useState } from 'preact/hooks';

export interface Action<A extends unknown[], T> {
  run(...args: A): Promise<T | undefined>;
  busy: boolean;
  error: unknown;
  result: T | undefined;
}

/** A button's call to the API: busy while it runs, its error kept for display, the form's input untouched. */
export function useAction<A extends unknown[], T>(action: (...args: A) => Promise<T>): Action<A, T> {
  const [state, setState] = useState<{ busy: boolean; error?: unknown; result?: T }>({ busy: false });
  const run = async (...args: A) => {
    setState({ busy: true });
    try {
      const result = await action(...args);
      setState({ busy: false, result });
      return result;
    } catch (error) {
      setState({ busy: false, error });
      return undefined;
    }
  };
  return { run, busy: state.busy, error: state.error, result: state.result };
}
