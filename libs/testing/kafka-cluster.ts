import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { unusedLoopbackPort } from './free-port.js';
import { statState, untilStopped } from './stopped-process.js';

/**
 * A local Apache Kafka cluster in KRaft combined mode (each node broker and controller) on 127.0.0.1,
 * run from the Apache Kafka jars of Maven Central: `npm run kafka:up` starts one for the test suites, the
 * fault tests start their own to kill. The JVMs run detached, so a cluster outlives the process that
 * started it until `stop` (or `npm run kafka:down`).
 */

/** The lines the cluster can run: the newest 4.x on Maven Central when this was written, and the last 3.x. */
export const KAFKA_VERSIONS = { '4': '4.4.0', '3.9': '3.9.2' } as const;
export const DEFAULT_KAFKA_VERSION = KAFKA_VERSIONS['4'];

/** `KAFKA_VERSION` as given: a line ("4", "3.9") or an exact version ("4.1.1"). */
export const kafkaVersion = (requested: string | undefined): string =>
  !requested ? DEFAULT_KAFKA_VERSION : ((KAFKA_VERSIONS as Record<string, string>)[requested] ?? requested);

/** Whether this machine can run a cluster: a JVM and Maven (which fetches the jars once). */
export const kafkaRuntimeAvailable = (): boolean =>
  spawnSync('java', ['-version'], { stdio: 'ignore' }).status === 0 && spawnSync('mvn', ['-v'], { stdio: 'ignore' }).status === 0;

const ROOT = path.resolve(import.meta.dirname, '../..');
/** Where `npm run kafka:up` keeps its cluster (state file, configs, logs, data): in this checkout, outside git. */
export const LOCAL_CLUSTER_DIR = path.join(ROOT, 'node_modules/.cache/kafka-cluster');

const cacheRoot = () => path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'webhook-relay', 'kafka');

/**
 * The classpath of Kafka `version`'s server (kafka_2.13 and its runtime dependencies, plus slf4j-simple
 * for its logs). Maven fetches the jars into ~/.m2 once; the classpath is kept beside a generated pom
 * under ~/.cache/webhook-relay/kafka/<version>, so later starts need neither Maven nor the network.
 */
export function kafkaClasspath(version: string): string {
  const dir = path.join(cacheRoot(), version);
  const file = path.join(dir, 'classpath.txt');
  const cached = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : '';
  if (cached && cached.split(path.delimiter).every((jar) => fs.existsSync(jar))) return cached;
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'pom.xml'), serverPom(version));
  const maven = spawnSync('mvn', ['-q', '-B', 'dependency:build-classpath', `-Dmdep.outputFile=${file}`], { cwd: dir, stdio: ['ignore', 'inherit', 'inherit'] });
  if (maven.error || maven.status !== 0) throw new Error(`mvn could not resolve org.apache.kafka:kafka_2.13:${version} (${maven.error?.message ?? `exit ${maven.status}`})`);
  return fs.readFileSync(file, 'utf8').trim();
}

const serverPom = (version: string) => `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.webhook-relay</groupId>
  <artifactId>kafka-server-${version}</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>${version}</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-simple</artifactId><version>1.7.36</version></dependency>
  </dependencies>
</project>
`;

/**
 * JVM flags for a 2-core machine running three brokers beside the relay and its tests: a small heap, the
 * serial collector (no GC threads) and the C1 compiler only (starts faster, compiles less).
 */
const JVM_FLAGS = (heapMb: number) => [
  `-Xms${Math.min(128, heapMb)}m`,
  `-Xmx${heapMb}m`,
  '-XX:+UseSerialGC',
  '-XX:TieredStopAtLevel=1',
  '-XX:CICompilerCount=1',
  '-XX:+ExitOnOutOfMemoryError',
  '-Djava.awt.headless=true',
  '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
  '-Dorg.slf4j.simpleLogger.showDateTime=true',
];

export interface KafkaNode {
  id: number;
  port: number;
  controllerPort: number;
  /** The running JVM, or undefined while the node is down. */
  pid?: number;
}

/** What `kafka:up` leaves behind for `kafka:down` and the test harness: `<dir>/cluster.json`. */
export interface KafkaClusterState {
  version: string;
  dir: string;
  brokers: string[];
  nodes: KafkaNode[];
}

export interface KafkaClusterOptions {
  dir: string;
  version?: string;
  brokerCount?: number;
  /** Heap of each broker (default 512 MB). */
  heapMb?: number;
  /** Bound on the start, until topics can be created (default 120 s). */
  startTimeoutMs?: number;
}

export interface KafkaCluster extends KafkaClusterState {
  /** SIGKILLs node `id`'s JVM and resolves once it has exited. */
  kill(id: number): Promise<void>;
  /**
   * Freezes node `id`'s JVM (SIGSTOP) and resolves once every thread of it has stopped: requests sent to
   * it after that stay unanswered until `resume`.
   */
  pause(id: number): Promise<void>;
  resume(id: number): void;
  /** Starts node `id` again on its ports and data; resolves once its port answers. */
  restart(id: number): Promise<void>;
  /** Kills every node and deletes the cluster's directory. */
  stop(): Promise<void>;
}

/** Formats and starts a fresh cluster in `dir` (emptied first); resolves once topics can be created. */
/**
 * A random cluster id in Kafka's form (16 bytes, base64url). The top bit of the first byte is cleared so
 * the id never starts with `-` or `_`: StorageTool read one starting with `-` as an option and refused
 * to format (1 start in 64 failed so, CI on 2026-12-01).
 */
export function kafkaClusterId(): string {
  const bytes = randomBytes(16);
  bytes[0]! &= 0x7f;
  return bytes.toString('base64url');
}

export async function startKafkaCluster(options: KafkaClusterOptions): Promise<KafkaCluster> {
  const version = kafkaVersion(options.version);
  const count = options.brokerCount ?? 3;
  const heapMb = options.heapMb ?? 512;
  const classpath = kafkaClasspath(version);
  fs.rmSync(options.dir, { recursive: true, force: true });
  fs.mkdirSync(options.dir, { recursive: true });
  const nodes: KafkaNode[] = [];
  for (let id = 1; id <= count; id += 1) nodes.push({ id, port: await unusedLoopbackPort(), controllerPort: await unusedLoopbackPort() });
  const clusterId = kafkaClusterId();
  await Promise.all(
    nodes.map((node) => {
      fs.writeFileSync(configFile(options.dir, node.id), serverProperties(options.dir, node, nodes));
      return runJava(classpath, heapMb, ['kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', configFile(options.dir, node.id)], path.join(options.dir, `format-${node.id}.log`));
    }),
  );
  const state: KafkaClusterState = { version, dir: options.dir, brokers: nodes.map((node) => `127.0.0.1:${node.port}`), nodes };
  const cluster = clusterOf(state, classpath, heapMb);
  try {
    for (const node of nodes) launch(state, node, classpath, heapMb);
    writeState(state);
    await waitUntilTopicsCanBeCreated(state, options.startTimeoutMs ?? 120_000);
    return cluster;
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}

/** The cluster `kafka:up` left in `dir`, or undefined when none is there. */
export function readClusterState(dir: string = LOCAL_CLUSTER_DIR): KafkaClusterState | undefined {
  const file = path.join(dir, 'cluster.json');
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as KafkaClusterState) : undefined;
}

/** Stops the cluster described in `dir` (any of its JVMs still running) and deletes `dir`. */
export async function stopClusterIn(dir: string): Promise<void> {
  const state = readClusterState(dir);
  if (state) await Promise.all(state.nodes.map((node) => killNode(state, node)));
  fs.rmSync(dir, { recursive: true, force: true });
}

function clusterOf(state: KafkaClusterState, classpath: string, heapMb: number): KafkaCluster {
  const node = (id: number) => {
    const found = state.nodes.find((candidate) => candidate.id === id);
    if (!found) throw new Error(`no Kafka node ${id}`);
    return found;
  };
  return {
    ...state,
    get nodes() {
      return state.nodes;
    },
    kill: async (id) => {
      await killNode(state, node(id));
      writeState(state);
    },
    pause: async (id) => {
      const { pid } = node(id);
      if (pid === undefined) throw new Error(`Kafka node ${id} is down`);
      process.kill(pid, 'SIGSTOP');
      await untilStopped(pid);
    },
    resume: (id) => {
      const { pid } = node(id);
      if (pid !== undefined) process.kill(pid, 'SIGCONT');
    },
    restart: async (id) => {
      launch(state, node(id), classpath, heapMb);
      writeState(state);
      await waitForPort(node(id).port, 60_000);
    },
    stop: () => stopClusterIn(state.dir),
  };
}

const configFile = (dir: string, id: number) => path.join(dir, `server-${id}.properties`);

function serverProperties(dir: string, node: KafkaNode, nodes: KafkaNode[]): string {
  const replicas = Math.min(3, nodes.length);
  const settings: Record<string, string | number> = {
    'process.roles': 'broker,controller',
    'node.id': node.id,
    'controller.quorum.voters': nodes.map((voter) => `${voter.id}@127.0.0.1:${voter.controllerPort}`).join(','),
    listeners: `PLAINTEXT://127.0.0.1:${node.port},CONTROLLER://127.0.0.1:${node.controllerPort}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${node.port}`,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    'log.dirs': path.join(dir, `data-${node.id}`),
    'num.partitions': 4,
    'default.replication.factor': replicas,
    'min.insync.replicas': Math.min(2, replicas),
    'offsets.topic.replication.factor': replicas,
    'offsets.topic.num.partitions': 8,
    'transaction.state.log.replication.factor': replicas,
    'transaction.state.log.min.isr': Math.min(2, replicas),
    'share.coordinator.state.topic.replication.factor': replicas,
    'share.coordinator.state.topic.min.isr': Math.min(2, replicas),
    'group.initial.rebalance.delay.ms': 0,
    // A SIGKILLed broker's partitions get new leaders once the controller fences it, after this without
    // heartbeats (Kafka's default 9 s, heartbeats every 2 s): meanwhile produce to them fails.
    'broker.session.timeout.ms': 3_000,
    'broker.heartbeat.interval.ms': 500,
    // Above the largest plan payload (10 MB), as ops/kafka/topics.md configures production clusters.
    'message.max.bytes': 16 * 1024 * 1024,
    'replica.fetch.max.bytes': 16 * 1024 * 1024,
    // Few threads: three brokers share two cores with the relay and the tests.
    'num.network.threads': 2,
    'num.io.threads': 2,
    'background.threads': 2,
    'num.replica.fetchers': 1,
    'log.cleaner.threads': 1,
    'num.recovery.threads.per.data.dir': 1,
  };
  return Object.entries(settings).map(([name, value]) => `${name}=${value}`).join('\n') + '\n';
}

function launch(state: KafkaClusterState, node: KafkaNode, classpath: string, heapMb: number): void {
  const log = fs.openSync(path.join(state.dir, `broker-${node.id}.log`), 'a');
  const child = spawn('java', [...JVM_FLAGS(heapMb), '-cp', classpath, 'kafka.Kafka', configFile(state.dir, node.id)], { detached: true, stdio: ['ignore', log, log] });
  fs.closeSync(log);
  child.unref();
  node.pid = child.pid;
}

function runJava(classpath: string, heapMb: number, args: string[], logFile: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const log = fs.openSync(logFile, 'a');
    const child = spawn('java', [...JVM_FLAGS(Math.min(heapMb, 256)), '-cp', classpath, ...args], { stdio: ['ignore', log, log] });
    fs.closeSync(log);
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`java ${args[0]} exited ${code}: ${fs.readFileSync(logFile, 'utf8').slice(-2000)}`))));
  });
}

/** SIGKILLs the node's JVM (only when the pid is still that JVM) and waits for it to be gone. */
async function killNode(state: KafkaClusterState, node: KafkaNode): Promise<void> {
  const pid = node.pid;
  node.pid = undefined;
  if (pid === undefined || !isNodeProcess(pid, state.dir, node.id)) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return;
  }
  while (isNodeProcess(pid, state.dir, node.id)) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** Whether `pid` is a live (not zombie) JVM running this cluster's node `id`: a pid may have been reused. */
function isNodeProcess(pid: number, dir: string, id: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (statState(stat) === 'Z') return false;
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(configFile(dir, id));
  } catch {
    return false;
  }
}

function writeState(state: KafkaClusterState): void {
  const { version, dir, brokers, nodes } = state;
  fs.writeFileSync(path.join(dir, 'cluster.json'), JSON.stringify({ version, dir, brokers, nodes }, null, 2) + '\n');
}

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`Kafka broker on port ${port} did not listen within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Creates (then deletes) a topic replicated on every node: the cluster is ready for the relay's topics. */
async function waitUntilTopicsCanBeCreated(state: KafkaClusterState, timeoutMs: number): Promise<void> {
  const admin = new Kafka({ clientId: 'kafka-cluster-probe', brokers: state.brokers, logLevel: logLevel.NOTHING, retry: { retries: 0 } }).admin();
  const deadline = Date.now() + timeoutMs;
  const topic = `cluster-probe-${randomBytes(4).toString('hex')}`;
  let last: unknown;
  try {
    for (;;) {
      for (const node of state.nodes) {
        if (node.pid !== undefined && !isNodeProcess(node.pid, state.dir, node.id)) throw new Error(`Kafka node ${node.id} exited at start:\n${logTail(state, node.id)}`);
      }
      try {
        await admin.connect();
        await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: state.nodes.length >= 3 ? 3 : 1 }], waitForLeaders: true });
        await admin.deleteTopics({ topics: [topic] });
        return;
      } catch (error) {
        last = error;
      }
      if (Date.now() > deadline) throw new Error(`Kafka cluster could not create a topic within ${timeoutMs} ms: ${(last as Error).message}\n${logTail(state, 1)}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

const logTail = (state: KafkaClusterState, id: number) => {
  try {
    return fs.readFileSync(path.join(state.dir, `broker-${id}.log`), 'utf8').slice(-3000);
  } catch {
    return '(no log)';
  }
};
