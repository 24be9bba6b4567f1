import { logLevel, type logCreator } from 'kafkajs';
import type { BrokerLogger } from '../broker.js';

/** Routes kafkajs' warnings and errors to the injected logger (kafkajs runs at NOTHING when none is given). */
export function kafkaLogCreator(logger: BrokerLogger): logCreator {
  return () =>
    ({ namespace, level, log }) => {
      const { message, timestamp: _timestamp, logger: _name, ...details } = log;
      const context = { kafkajs: namespace, ...details };
      if (level === logLevel.ERROR) logger.error(context, `kafkajs: ${message}`);
      else if (level === logLevel.WARN) logger.warn(context, `kafkajs: ${message}`);
    };
}
