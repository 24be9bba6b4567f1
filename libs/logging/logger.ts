import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

export interface LoggerOptions {
  level?: string;
  name?: string;
  /** Where lines go; defaults to stdout. Tests pass a stream they read; a pipeline thread, its main thread (thread-log.ts). */
  destination?: DestinationStream;
}

/** Paths whose values never reach a log line, whatever object carries them. */
export const REDACTED_PATHS = [
  'secret',
  '*.secret',
  'signingSecret',
  '*.signingSecret',
  'authConfig',
  '*.authConfig',
  'password',
  '*.password',
  'token',
  '*.token',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers.cookie',
];

export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      name: options.name ?? 'relay',
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.destination ?? process.stdout,
  );
}
