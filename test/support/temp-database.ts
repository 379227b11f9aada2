import { beforeEach, onTestFinished } from 'vitest';
import { openDatabase, type Database } from '../../src/store/index.js';
import { tempSite, type TempSite } from './temp-site.js';

/** For each test of the calling describe block: a fresh temp site and its opened database, both gone after the test. */
export function databasePerTest(): { readonly temp: TempSite; readonly db: Database } {
  let temp: TempSite | undefined;
  let db: Database | undefined;
  beforeEach(() => {
    const made = tempSite();
    const opened = openDatabase(made.dataDir);
    [temp, db] = [made, opened];
    // Registered first, so it runs after whatever the test registers on top of this database.
    onTestFinished(() => {
      opened.close();
      made.cleanup();
    });
  });
  return {
    get temp() {
      if (!temp) throw new Error('databasePerTest: used outside a test');
      return temp;
    },
    get db() {
      if (!db) throw new Error('databasePerTest: used outside a test');
      return db;
    },
  };
}
