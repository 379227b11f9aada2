export { generateSecret, hashSecret, verifySecret } from './secret-hash.js';
