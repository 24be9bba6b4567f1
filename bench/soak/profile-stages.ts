/**
 * Splits a relay process's CPU profile (`bench-soak.ts --cpu-prof`) by pipeline stage:
 *
 *   node --import tsx bench/soak/profile-stages.ts <file.cpuprofile> [--events N] [--from US --to US]
 *
 * A sample belongs to the role whose code is nearest the root of its stack (`apps/<role>/`: after an
 * `await` a stack starts at the continuing function, so this is the role that asked for the work),
 * else to the shared part that is (`libs/broker` (fetch loops, log appends, commits), `libs/store`,
 * other `libs`), else to the outermost dependency in it (`kafkajs`: its fetch loops; `koa`), else to
 * Node itself ("runtime": HTTP parsing, timers, GC). Idle time is
 * left out. With `--events`, the events the process handled in the profile's span, each stage's time
 * is also given per event. `--from` and `--to` keep the samples of one window only, in microseconds of the
 * machine's monotonic clock (the profile's own clock): `bench-soak.ts --cpu-prof` prints each rate's load
 * window so, because a whole profile also holds start-up, settling, drains and idle fetch loops.
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
}

const { values: args, positionals } = parseArgs({ allowPositionals: true, options: { events: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' } } });
if (positionals.length !== 1) throw new Error('usage: profile-stages.ts <file.cpuprofile> [--events N] [--from US --to US]');
const profile = JSON.parse(fs.readFileSync(positionals[0]!, 'utf8')) as CpuProfile;
const events = args.events === undefined ? undefined : Number(args.events);
const from = Number(args.from ?? -Infinity);
const to = Number(args.to ?? Infinity);

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);

const ROLE = /\/apps\/([a-z]+)\//;
const PACKAGE = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//;
const SHARED: [RegExp, string][] = [
  [/\/libs\/broker\//, 'broker (libs/broker)'],
  [/\/libs\/store\//, 'store (libs/store)'],
  [/\/libs\//, 'other libs'],
];

/** The stage of the stack ending at `leaf`: outermost role frame, else outermost shared frame, else runtime. */
function stageOf(leaf: number): string | undefined {
  const name = byId.get(leaf)!.callFrame.functionName;
  if (name === '(idle)') return undefined;
  if (name === '(garbage collector)') return 'runtime: garbage collector';
  let role: string | undefined;
  let shared: string | undefined;
  let dependency: string | undefined;
  for (let id: number | undefined = leaf; id !== undefined; id = parentOf.get(id)) {
    const url = byId.get(id)!.callFrame.url;
    const inDependency = PACKAGE.exec(url);
    if (inDependency) {
      dependency = inDependency[1];
      continue;
    }
    const match = ROLE.exec(url);
    if (match) role = match[1];
    else shared = SHARED.find(([pattern]) => pattern.test(url))?.[1] ?? shared;
  }
  return role ? `role: ${role}` : (shared ?? (dependency ? `dependency: ${dependency}` : 'runtime: node'));
}

const microsByStage = new Map<string, number>();
let busyMicros = 0;
let sampledAt = profile.startTime;
profile.samples.forEach((sample, index) => {
  const micros = profile.timeDeltas[index] ?? 0;
  sampledAt += micros;
  if (sampledAt < from || sampledAt > to) return;
  const stage = stageOf(sample);
  if (!stage) return;
  busyMicros += micros;
  microsByStage.set(stage, (microsByStage.get(stage) ?? 0) + micros);
});

const window = args.from || args.to ? `, ${((Math.min(to, sampledAt) - Math.max(from, profile.startTime)) / 1e6).toFixed(1)} s window` : '';
console.log(`${positionals[0]}: ${(busyMicros / 1e6).toFixed(2)} s of CPU sampled (idle left out${window})${events ? ` over ${events} events` : ''}`);
/** Stages under this share of the CPU are summed into one line. */
const LISTED_SHARE = 0.005;
const line = (stage: string, micros: number) =>
  console.log(`  ${`${((100 * micros) / busyMicros).toFixed(1)}%`.padStart(6)}  ${stage.padEnd(34)}${events ? `${(micros / events).toFixed(0).padStart(6)} us/event` : ''}`);
let rest = 0;
for (const [stage, micros] of [...microsByStage].sort((a, b) => b[1] - a[1])) {
  if (micros >= LISTED_SHARE * busyMicros) line(stage, micros);
  else rest += micros;
}
if (rest > 0) line(`the rest (each under ${LISTED_SHARE * 100}%)`, rest);
