/**
 * `KAFKA_TOPIC_PREFIX`: the relay's topics and consumer groups on the cluster carry it, so several relays
 * (or test runs) share one cluster without reading each other's records. The pipeline names topics without
 * it; the adapter adds it on the way to Kafka and takes it off on the way back.
 */
export interface TopicPrefix {
  /** The cluster's name for a topic or group the pipeline names `name`. */
  qualify(name: string): string;
  /** The pipeline's name for a cluster topic, or undefined when the topic is not the relay's. */
  local(name: string): string | undefined;
}

export function topicPrefix(prefix = ''): TopicPrefix {
  return {
    qualify: (name) => prefix + name,
    local: (name) => (name.startsWith(prefix) ? name.slice(prefix.length) : undefined),
  };
}
