import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A real file system of its own, small enough to fill: a tmpfs mounted on a temp directory. Mounting
 * needs root (CAP_SYS_ADMIN); `smallDiskUnavailableReason` says why it cannot be had, for a skip.
 */
export interface SmallDisk {
  dir: string;
  /** Writes a filler file until the disk refuses with ENOSPC; answers the bytes it took. */
  fill(): number;
  /** Deletes the filler: the space is back. */
  free(): void;
  unmount(): void;
}

const FILLER = '.filler';
const CHUNKS = [1024 * 1024, 4096] as const;

function mount(dir: string, sizeMb: number): void {
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m,mode=0700`, 'tmpfs', dir], { stdio: 'pipe' });
}

/** Null when a small disk can be mounted here; otherwise why not. */
export function smallDiskUnavailableReason(): string | null {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'small-disk-probe-'));
  try {
    mount(dir, 1);
    execFileSync('umount', [dir], { stdio: 'pipe' });
    return null;
  } catch (error) {
    return `cannot mount a tmpfs (needs root): ${((error as { stderr?: Buffer }).stderr?.toString() || (error as Error).message).trim()}`;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function mountSmallDisk(sizeMb: number): SmallDisk {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'small-disk-'));
  mount(dir, sizeMb);
  const filler = path.join(dir, FILLER);
  return {
    dir,
    fill() {
      const fd = fs.openSync(filler, 'a');
      let written = 0;
      try {
        // Large chunks first, then pages, so that not even a page is left.
        for (const size of CHUNKS) {
          const chunk = Buffer.alloc(size, 0x5a);
          for (;;) {
            try {
              written += fs.writeSync(fd, chunk);
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
              throw error;
            }
          }
        }
      } finally {
        fs.closeSync(fd);
      }
      return written;
    },
    free: () => fs.rmSync(filler, { force: true }),
    unmount() {
      execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
