import { parentPort, workerData } from 'node:worker_threads';
import { connectPortBroker } from '../../libs/broker/thread/port-broker.js';
import { createLogger } from '../../libs/logging/logger.js';
import { postedLines } from '../../libs/logging/thread-log.js';
import { createRelayMetrics } from '../../libs/metrics/relay-metrics.js';
import type { PipelineThreadData, ThreadReply, ThreadRequest } from './pipeline-thread-messages.js';
import { closerStack, configGroupOf, openBackends, roleBuilders, startRoles } from './relay.js';

/**
 * A pipeline thread (pipeline-threads.ts starts it): the router, deliverer and recorder over a store
 * connection of its own and the main thread's broker. Its metrics are summed into the main thread's
 * `/metrics`; the process-wide ones (CPU, memory) are the main thread's alone.
 */
const data = workerData as PipelineThreadData;
const port = parentPort!;
const reply = (message: ThreadReply) => port.postMessage(message);
// Structured cloning turns a Buffer into a Uint8Array.
const config = { ...data.config, encryptionKey: data.config.encryptionKey && Buffer.from(data.config.encryptionKey) };
// The main thread names this thread in each line and writes it where its own lines go.
const logger = createLogger({ level: data.logLevel, destination: postedLines((line) => reply({ type: 'log', line })) });
const metrics = createRelayMetrics({ defaultMetrics: false, thread: `pipeline-${data.index}` });
const closers = closerStack(logger);

async function stop(): Promise<void> {
  await closers.closeAll();
  // Ends this thread only, whatever timers or handles a library left referenced.
  process.exit(0);
}

try {
  const broker = data.brokerPort ? connectPortBroker(data.brokerPort) : undefined;
  if (broker) closers.push(() => broker.close());
  const backends = await openBackends(config, logger, metrics, closers, broker);
  await startRoles(config, backends, { logger, metrics, closers, configGroup: configGroupOf(config, `pipeline-${data.index}`) }, roleBuilders(config, 'pipeline thread'));
  port.on('message', (request: ThreadRequest) => {
    if (request.type === 'ping') reply({ type: 'pong', id: request.id });
    else if (request.type === 'metrics') void metrics.registry.getMetricsAsJSON().then((json) => reply({ type: 'metrics', id: request.id, metrics: json }));
    else void stop();
  });
  reply({ type: 'ready' });
} catch (error) {
  await closers.closeAll();
  reply({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
  process.exit(1);
}
