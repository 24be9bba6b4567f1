import { connectPortBroker } from '../../libs/broker/thread/port-broker.js';
import { configGroupOf, openBackends, roleBuilders, startRoles } from './relay.js';
import { runThread } from './thread-body.js';

/**
 * A pipeline thread (pipeline-threads.ts starts it): the router, deliverer and recorder over a store
 * connection of its own and, on the embedded log, the main thread's broker.
 */
await runThread(async ({ data, config, logger, metrics, closers }) => {
  const broker = data.brokerPort ? connectPortBroker(data.brokerPort) : undefined;
  if (broker) closers.push(() => broker.close());
  const backends = await openBackends(config, logger, metrics, closers, broker);
  await startRoles(config, backends, { logger, metrics, closers, configGroup: configGroupOf(config, data.name), thread: data.name }, roleBuilders(config, 'pipeline thread'));
});
