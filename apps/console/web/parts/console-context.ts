import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Api } from '../api.js';

export interface ConsoleState {
  api: Api;
  /** False for a `read` key: write buttons are not shown. */
  canWrite: boolean;
}

export const ConsoleContext = createContext<ConsoleState | null>(null);

export function useConsole(): ConsoleState {
  const state = useContext(ConsoleContext);
  if (!state) throw new Error('useConsole runs inside the signed-in console');
  return state;
}
