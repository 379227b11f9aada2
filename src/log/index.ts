export { createLogger, lineWriter, type Logger } from './logger.js';
