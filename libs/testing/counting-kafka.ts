import type { Consumer, ConsumerConfig, Kafka, Producer, ProducerConfig } from 'kafkajs';

/** A real kafkajs client whose producers and consumers count the requests they send, by API (`Produce`, `OffsetCommit`, ...). */
export interface CountingKafka {
  kafka: Kafka;
  requests(apiName: string): number;
}

export function countingKafka(kafka: Kafka): CountingKafka {
  const counts = new Map<string, number>();
  const count = ({ payload }: { payload: { apiName: string } }) => counts.set(payload.apiName, (counts.get(payload.apiName) ?? 0) + 1);
  // Everything else (admin, logger) is the client's own.
  const counting = Object.create(kafka) as Kafka;
  counting.producer = (config?: ProducerConfig): Producer => {
    const producer = kafka.producer(config);
    producer.on(producer.events.REQUEST, count);
    return producer;
  };
  counting.consumer = (config: ConsumerConfig): Consumer => {
    const consumer = kafka.consumer(config);
    consumer.on(consumer.events.REQUEST, count);
    return consumer;
  };
  return { kafka: counting, requests: (apiName) => counts.get(apiName) ?? 0 };
}
