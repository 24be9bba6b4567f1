import { spawn } from 'node:child_process';

/** Loops of GET requests run by a process of their own, so that reading large answers costs the test process nothing. */
export interface ReadLoops {
  /** Ends the loops; resolves with how many reads completed, or rejects if one was answered other than 200. */
  stop(): Promise<number>;
}

// Plain JavaScript for `node -e`: `loops` sequential loops of `url` until SIGTERM, then the count on stdout.
const SCRIPT = `
const [url, authorization, loops] = process.argv.slice(1);
let reads = 0, failed = null, running = true;
process.on('SIGTERM', () => { running = false; });
const loop = async () => {
  while (running && failed === null) {
    const response = await fetch(url, { headers: { authorization } });
    await response.arrayBuffer();
    if (response.status !== 200) failed = response.status;
    else reads++;
  }
};
Promise.all(Array.from({ length: Number(loops) }, loop)).then(() => process.stdout.write(JSON.stringify({ reads, failed })));
`;

export function startReadLoops(url: string, authorization: string, loops: number): ReadLoops {
  const child = spawn(process.execPath, ['-e', SCRIPT, url, authorization, String(loops)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  return {
    async stop() {
      child.kill('SIGTERM');
      await exited;
      const { reads, failed } = JSON.parse(output) as { reads: number; failed: number | null };
      if (failed !== null) throw new Error(`a payload read was answered ${failed}`);
      return reads;
    },
  };
}
