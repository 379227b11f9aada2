import { beforeEach, onTestFinished } from 'vitest';
import { parseConfig, type Config } from '../../src/config/index.js';
import type { EventRecord } from '../../src/outbox/index.js';
import { Site, type SiteOptions } from '../../src/site/index.js';
import { openDatabase, type Database } from '../../src/store/index.js';
import { CP001_TWO_CHARGE_POINTS } from '../support/daemon.js';
import { baseConfig, tempSite } from '../support/temp-site.js';

/**
 * One site per test on a real database: s1 with station CP001 (charge points CP001-A on 1, CP001-B on 2) and a webhook,
 * s2 empty.
 */
export interface SiteFixture {
  db: Database;
  config: Config;
  site: Site;
  /** How often the site told delivery that events committed. */
  commits: number;
  /** The event ids the site told delivery of before their commit, in the order told. */
  announced: string[];
  /** The payloads of the events committed so far, oldest first. */
  events(type?: string): Array<Record<string, unknown>>;
  /** A site on the same database with other options (a fixed clock, say). */
  rebuild(options: Partial<SiteOptions>): Site;
}

export function siteFixture(): SiteFixture {
  const fixture = {
    commits: 0,
    events(type?: string) {
      return fixture.db
        .prepare<[], { event_type: string; payload: string }>('SELECT event_type, payload FROM events ORDER BY seq')
        .all()
        .filter((r) => type === undefined || r.event_type === type)
        .map((r) => JSON.parse(r.payload) as Record<string, unknown>);
    },
    rebuild(options: Partial<SiteOptions>) {
      fixture.site = new Site({ db: fixture.db, config: () => fixture.config, ...options });
      return fixture.site;
    },
  } as SiteFixture;
  beforeEach(() => {
    const temp = tempSite();
    fixture.config = parseConfig(
      JSON.stringify({
        ...baseConfig(temp.dataDir),
        sites: [
          {
            id: 's1',
            stations: [CP001_TWO_CHARGE_POINTS],
            webhooks: [{ id: 'w', url: 'http://127.0.0.1:9/w' }],
          },
          { id: 's2' },
        ],
      }),
    );
    const db = openDatabase(temp.dataDir);
    fixture.db = db;
    onTestFinished(() => {
      db.close();
      temp.cleanup();
    });
    fixture.commits = 0;
    fixture.announced = [];
    const events = {
      appended: (appended: readonly EventRecord[]) => fixture.announced.push(...appended.map((e) => e.eventId)),
      committed: () => (fixture.commits += 1),
      countsFirstAttempt: () => false,
    };
    fixture.site = new Site({ db: fixture.db, config: () => fixture.config, events });
  });
  return fixture;
}
