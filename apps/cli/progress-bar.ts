import cliProgress from 'cli-progress';
import type { ProgressListener } from '../../libs/transfer/transfer-kind.js';

/** Below this many items the work is over before a bar would be worth drawing. */
export const PROGRESS_THRESHOLD = 100;

export interface ProgressBar {
  listener: ProgressListener;
  stop(): void;
}

/**
 * A progress bar on `stream` (stderr: stdout may carry the exported JSON), one bar per phase. cli-progress
 * draws only on a terminal, so piped output stays clean.
 */
export function progressBar(stream: NodeJS.WritableStream = process.stderr): ProgressBar {
  let bar: cliProgress.SingleBar | undefined;
  let phase: string | undefined;
  return {
    listener(progress) {
      if (progress.total < PROGRESS_THRESHOLD) return;
      if (progress.phase !== phase) {
        bar?.stop();
        phase = progress.phase;
        bar = new cliProgress.SingleBar(
          { format: `${phase.padEnd(9)} [{bar}] {value}/{total}`, stream, hideCursor: true },
          cliProgress.Presets.shades_classic,
        );
        bar.start(progress.total, 0);
      }
      bar?.update(progress.done);
    },
    stop() {
      bar?.stop();
    },
  };
}
