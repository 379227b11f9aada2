export { generateSecret, hashSecret, verifySecret } from './secret-hash.js';
export {
  FailureLimiter,
  type CheckTicket,
  type FailureLimiterOptions,
  type LimiterVerdict,
} from './failure-limiter.js';
