import { LOCAL_CLUSTER_DIR, kafkaVersion, readClusterState, startKafkaCluster, stopClusterIn } from './kafka-cluster.js';

/**
 * `npm run kafka:up`: a local 3-broker Apache Kafka cluster (KAFKA_VERSION: "4", the default, or "3.9",
 * or an exact version) whose last printed line is `KAFKA_BROKERS=...`. `npm run kafka:down` stops it and
 * deletes its data. One cluster per checkout (in node_modules/.cache/kafka-cluster); `up` replaces it.
 */
async function main(command: string | undefined): Promise<void> {
  if (command === 'down') {
    await stopClusterIn(LOCAL_CLUSTER_DIR);
    console.log('Kafka cluster stopped, its data deleted');
    return;
  }
  if (command !== 'up') throw new Error('usage: kafka-cluster-cli.ts up|down');
  if (readClusterState()) await stopClusterIn(LOCAL_CLUSTER_DIR);
  const version = kafkaVersion(process.env.KAFKA_VERSION);
  const started = Date.now();
  const cluster = await startKafkaCluster({ dir: LOCAL_CLUSTER_DIR, version, brokerCount: 3 });
  console.log(`Kafka ${cluster.version}: 3 brokers (KRaft) ready in ${((Date.now() - started) / 1000).toFixed(1)} s; logs in ${cluster.dir}`);
  console.log(`KAFKA_BROKERS=${cluster.brokers.join(',')}`);
}

main(process.argv[2]).catch((error: unknown) => {
  console.error((error as Error).message);
  process.exit(1);
});
