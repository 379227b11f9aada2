export { allocate, type Share } from './allocation.js';
export * from './types.js';
