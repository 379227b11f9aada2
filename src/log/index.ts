export { createLogger, lineWriter, type Logger } from './logger.js';
export { messageOf } from './message-of.js';
export { summarisedWarn, type SummarisedWarn, type WarningBudget } from './repeated-warnings.js';
export { safely } from './safely.js';
