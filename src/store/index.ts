export {
  convertStorageLayout,
  DATABASE_FILE,
  inTransaction,
  openDatabase,
  type Database,
  type LayoutChange,
  type OpenOptions,
} from './database.js';
export { MIGRATIONS, type Migration } from './migration-list.js';
export { KEYSTORE_FILE, migrate, NewerDatabaseError } from './migrations.js';
export { statement } from './statement-cache.js';
export { bumpChangeCounter, readChangeCounter, watchChangeCounter } from './change-counters.js';
export { GroupCommit } from './group-commit.js';
export { DirectWriter, type Writer } from './writer.js';
export {
  DataDirInUseError,
  dataDirHolder,
  lockDataDir,
  type DataDirHolder,
  type DataDirLock,
} from './data-dir-lock.js';
export { deleteInBatches, reclaimFreePages, schedulePruning, type Pruned } from './pruning.js';
export { DatabaseDamagedError, DataDirUnusableError } from './storage-errors.js';
export {
  restoreUpgradeBackup,
  rollbackPlan,
  upgradeBackups,
  type RollbackPlan,
  type UpgradeBackup,
} from './upgrade-backups.js';
