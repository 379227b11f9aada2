export { createLogger, lineWriter, type Logger } from './logger.js';
export { messageOf } from './message-of.js';
