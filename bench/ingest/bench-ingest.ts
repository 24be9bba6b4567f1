/**
 * Ingest throughput and latency of the relay's gateway against a bare node:http server that reads the
 * body and answers 200. Same load for every target: autocannon, 50 connections, ~10 s, 1 KB JSON bodies,
 * every request a different body with its own X-Hub-Signature-256 and X-GitHub-Delivery, so neither
 * dedup nor any cache short-circuits the work; the source (codehost, dedup on) is on plan enterprise,
 * its rate limit raised so that it does not cap the load. Target: gateway >= 0.5x bare req/s with
 * p99 < 10 ms.
 *
 * Relay targets use the embedded default (SQLite store + embedded log in a temp dir), measured twice:
 * the gateway role alone (its own cost: every request verified, deduplicated and durably appended to
 * the log before 200), and all roles in one process, where the router stores every event meanwhile.
 * Between them, the relay's HTTP shell with no ingest work (same Koa app and middleware, a route that
 * reads the body and answers): the floor that Koa itself puts under the gateway's figures. Then the shell
 * with the CPU work ingest must do whatever keeps the event (signature, event id, payload hash, message
 * encoding) and nothing stored: the ceiling for any gateway that keeps its events, on this machine.
 *
 *   node --import tsx bench/ingest/bench-ingest.ts [--duration <s>] [--cpu-prof]    (builds dist/ first)
 *
 * Each server runs in a child process of its own (bench-target.ts), so the load generator does not
 * share its event loop. The targets run what `npm start` runs, compiled JavaScript under plain node
 * (tsx's keepNames wrappers cost ~2%): the bench first runs `npm run build` and forks
 * dist/bench/ingest/bench-target.js. `--cpu-prof` writes CPU profiles of the relay processes to a
 * temp directory.
 */
import autocannon from 'autocannon';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { TargetReady, TargetReport } from './bench-target.js';
import { startTarget, type RunningTarget, type TargetKind } from './target-client.js';
import { BODY_BYTES, signedWebhook } from '../signed-webhook.js';

const CONNECTIONS = 50;
const WARMUP_SECONDS = 2;
const TARGET_RATIO = 0.5;
const TARGET_P99_MS = 10;

const ROOT = path.resolve(import.meta.dirname, '../..');

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    'cpu-prof': { type: 'boolean', default: false },
  },
});
const durationSeconds = Number(args.duration);
const profileDir = args['cpu-prof'] ? fs.mkdtempSync(path.join(os.tmpdir(), 'ingest-profiles-')) : undefined;

function startProfiledTarget(kind: TargetKind): Promise<RunningTarget> {
  return startTarget(kind, profileDir && (kind === 'gateway' || kind === 'all') ? ['--cpu-prof', `--cpu-prof-dir=${path.join(profileDir, kind)}`] : []);
}

function load(ready: TargetReady, seconds: number): Promise<autocannon.Result> {
  return autocannon({
    url: ready.url,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        path: ready.path,
        setupRequest: (request) => {
          const { body, headers } = signedWebhook(ready.secret);
          return { ...request, body, headers };
        },
      },
    ],
  });
}

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  failed: number;
  /** Requests answered 2xx in the warm-up and the run. */
  accepted: number;
  report: TargetReport;
}

async function measure(kind: TargetKind): Promise<Figures> {
  const target = await startProfiledTarget(kind);
  const warmup = await load(target.ready, WARMUP_SECONDS);
  const result = await load(target.ready, durationSeconds);
  const report = await target.stop();
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failed: result.non2xx + result.errors + result.timeouts + warmup.non2xx + warmup.errors + warmup.timeouts,
    accepted: result['2xx'] + warmup['2xx'],
    report,
  };
}

/**
 * Autocannon stops counting at the deadline with up to one request per connection in flight, which
 * the server may still accept: the durable count may exceed the 2xx count by that much, never less.
 */
function checkDurable(name: string, count: number | undefined, f: Figures): string {
  if (count === undefined) return '';
  const consistent = count >= f.accepted && count <= f.accepted + 2 * CONNECTIONS;
  return `   ${name} ${count}${consistent ? '' : ` (INCONSISTENT with ${f.accepted} answered 2xx)`}`;
}

const print = (name: string, f: Figures, baseline?: Figures) =>
  console.log(
    `${name.padEnd(26)} ${f.rps.toFixed(0).padStart(7)} req/s  p50 ${String(f.p50).padStart(3)} ms  p99 ${String(f.p99).padStart(3)} ms  ` +
      `cpu ${f.report.cpuMicrosPerRequest.toFixed(0).padStart(4)} us/req  failed ${f.failed}` +
      (baseline ? `  ratio ${(f.rps / baseline.rps).toFixed(2)}x` : '') +
      checkDurable('acknowledged', f.report.acknowledged, f) +
      checkDurable('stored', f.report.storedEvents, f),
  );

const verdict = (name: string, f: Figures, bare: Figures) => {
  const met = f.rps / bare.rps >= TARGET_RATIO && f.p99 < TARGET_P99_MS && f.failed === 0;
  return `${name}: ${met ? 'MET' : 'MISSED'}`;
};

// The targets run from dist/: it must hold the sources as they are now.
execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
console.log(`ingest bench: ${CONNECTIONS} connections, ${durationSeconds} s per target after a ${WARMUP_SECONDS} s warm-up, ${BODY_BYTES} B unique signed bodies`);
const bare = await measure('bare');
print('bare node:http', bare);
print('koa shell, no ingest work', await measure('shell'), bare);
const verify = await measure('verify');
print('shell + verify, none kept', verify, bare);
const gateway = await measure('gateway');
print('gateway role alone', gateway, bare);
const all = await measure('all');
print('relay, all roles (default)', all, bare);
console.log(
  `target >= ${TARGET_RATIO}x bare req/s and p99 < ${TARGET_P99_MS} ms: ${verdict('gateway role alone', gateway, bare)}, ${verdict('all roles', all, bare)}` +
    ` (on this machine, ${verdict('the ceiling, verify with none kept', verify, bare)})`,
);
if (profileDir) console.log(`CPU profiles: ${profileDir}`);
