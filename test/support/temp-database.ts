import { afterEach, beforeEach } from 'vitest';
import { openDatabase, type Database } from '../../src/store/index.js';
import { tempSite, type TempSite } from './temp-site.js';

/** For each test of the calling describe block: a fresh temp site and its opened database, both gone after the test. */
export function databasePerTest(): { readonly temp: TempSite; readonly db: Database } {
  let temp: TempSite | undefined;
  let db: Database | undefined;
  beforeEach(() => {
    temp = tempSite();
    db = openDatabase(temp.dataDir);
  });
  afterEach(() => {
    db?.close();
    temp?.cleanup();
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
