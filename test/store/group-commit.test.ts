import { beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { DirectWriter, GroupCommit, openDatabase, type Database } from '../../src/store/index.js';
import { tempSiteForTest } from '../support/for-test.js';

/** Every test's own database of notes: a connection that writes and another that reads what is committed. */
let db: Database;
let reader: Database;
beforeEach(() => {
  const temp = tempSiteForTest();
  const writing = openDatabase(temp.dataDir);
  onTestFinished(() => void writing.close());
  writing.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE)');
  const reading = openDatabase(temp.dataDir);
  onTestFinished(() => void reading.close());
  [db, reader] = [writing, reading];
});

const note = (text: string) => db.prepare('INSERT INTO notes (text) VALUES (?)').run(text);
const seen = () => reader.prepare('SELECT text FROM notes ORDER BY id').pluck().all();

describe('group commit: one transaction per event-loop turn', () => {
  it('commits the writes of a turn together at its end; another connection sees none before, all after', async () => {
    const group = new GroupCommit(db);
    group.write(() => note('a'));
    group.write(() => note('b'));
    expect(db.inTransaction).toBe(true);
    expect(seen()).toEqual([]);
    await group.committed();
    expect(db.inTransaction).toBe(false);
    expect(seen()).toEqual(['a', 'b']);
    await expect(group.committed()).resolves.toBeUndefined();
  });

  it('a write that throws undoes only itself', async () => {
    const group = new GroupCommit(db);
    group.write(() => note('a'));
    expect(() =>
      group.write(() => {
        note('half');
        note('a');
      }),
    ).toThrow(/UNIQUE/);
    group.write(() => note('b'));
    await group.committed();
    expect(seen()).toEqual(['a', 'b']);
  });

  it('writeNow joins the open group and commits it before returning', () => {
    const group = new GroupCommit(db);
    group.write(() => note('grouped'));
    group.writeNow(() => note('direct'));
    expect(db.inTransaction).toBe(false);
    expect(seen()).toEqual(['grouped', 'direct']);
  });

  it('writeNow called from inside a group write becomes part of that write', async () => {
    const group = new GroupCommit(db);
    group.write(() => {
      note('outer');
      group.writeNow(() => note('inner'));
    });
    expect(db.inTransaction).toBe(true);
    expect(seen()).toEqual([]);
    await group.committed();
    expect(seen()).toEqual(['outer', 'inner']);
  });

  it('a commit that fails rejects every waiter and leaves none of the group', async () => {
    db.exec(
      'CREATE TABLE parents (id INTEGER PRIMARY KEY); CREATE TABLE children (parent_id INTEGER REFERENCES parents (id) DEFERRABLE INITIALLY DEFERRED)',
    );
    const group = new GroupCommit(db);
    group.write(() => note('a'));
    // A deferred foreign key is checked at COMMIT: the commit itself fails.
    group.write(() => db.prepare('INSERT INTO children (parent_id) VALUES (42)').run());
    const waiter = group.committed();
    await expect(waiter).rejects.toThrow(/FOREIGN KEY/);
    expect(db.inTransaction).toBe(false);
    expect(seen()).toEqual([]);
    group.write(() => note('after'));
    await group.committed();
    expect(seen()).toEqual(['after']);
  });

  it('beforeCommit runs once per group, before its COMMIT (also one that fails), and at once without a group', async () => {
    db.exec(
      'CREATE TABLE parents (id INTEGER PRIMARY KEY); CREATE TABLE children (parent_id INTEGER REFERENCES parents (id) DEFERRABLE INITIALLY DEFERRED)',
    );
    const group = new GroupCommit(db);
    const told: Array<{ what: string; seen: unknown[] }> = [];
    const tell = (what: string) => () => told.push({ what, seen: seen() });
    tell('no group')();
    group.beforeCommit(tell('no group'));
    group.write(() => note('a'));
    group.beforeCommit(tell('first'));
    group.write(() => note('b'));
    group.beforeCommit(tell('second'));
    expect(told).toEqual([
      { what: 'no group', seen: [] },
      { what: 'no group', seen: [] },
    ]);
    await group.committed();
    expect(told.slice(2)).toEqual([
      { what: 'first', seen: [] },
      { what: 'second', seen: [] },
    ]);
    group.write(() => db.prepare('INSERT INTO children (parent_id) VALUES (42)').run());
    group.beforeCommit(tell('failing'));
    await expect(group.committed()).rejects.toThrow(/FOREIGN KEY/);
    expect(told.map((t) => t.what)).toEqual(['no group', 'no group', 'first', 'second', 'failing']);
    expect(seen()).toEqual(['a', 'b']);
  });

  it('a DirectWriter commits each write before it returns; nested, a write is a savepoint of the outer one', () => {
    const writer = new DirectWriter(db);
    writer.write(() => note('one'));
    expect(db.inTransaction).toBe(false);
    expect(seen()).toEqual(['one']);
    expect(() =>
      writer.writeNow(() => {
        note('two');
        expect(() => writer.write(() => (note('three'), note('one')))).toThrow(/UNIQUE/);
        throw new Error('outer fails too');
      }),
    ).toThrow(/outer fails too/);
    expect(seen()).toEqual(['one']);
  });

  it('bookkeeping commits without an fsync; a durable write after it commits it first and starts a synced group', async () => {
    const group = new GroupCommit(db);
    const level = () => db.pragma('synchronous', { simple: true });
    group.writeUnsynced(() => {
      note('attempt');
      expect(level()).toBe(1); // NORMAL
    });
    group.write(() => {
      note('station change');
      expect(level()).toBe(2); // FULL
    });
    // The unsynced group committed before the synced one began: another connection already sees it.
    expect(seen()).toEqual(['attempt']);
    group.writeUnsynced(() => note('delivered mark'));
    await group.committed();
    expect(seen()).toEqual(['attempt', 'station change', 'delivered mark']);
  });
});

describe('group commit: bookkeeping held for a later commit', () => {
  const level = () => db.pragma('synchronous', { simple: true });
  const turn = () => new Promise((resolve) => setTimeout(resolve, 20));

  it("waits for a station's change and is written in its synced commit, not in one of its own", async () => {
    const group = new GroupCommit(db, 60_000);
    const levels: unknown[] = [];
    const held = group.writeHeld(() => {
      note('delivered mark');
      levels.push(level());
    });
    await turn();
    expect(db.inTransaction).toBe(false);
    expect(seen()).toEqual([]);
    group.write(() => note('station change'));
    await held;
    // Written in the station's group (FULL: under its fsync), which committed both at once.
    expect(levels).toEqual([2]);
    expect(seen()).toEqual(['station change', 'delivered mark']);
  });

  it('does not make a synced group that changed nothing commit (and fsync) for it: it commits alone after the hold', async () => {
    const group = new GroupCommit(db, 300);
    const levels: unknown[] = [];
    const held = group.writeHeld(() => {
      note('delivered mark');
      levels.push(level());
    });
    // A station call that writes nothing (a reading thinned away) still opens a synced group.
    group.write(() => db.prepare("UPDATE notes SET text = 'x' WHERE id = -1").run());
    await group.committed();
    await turn();
    expect(levels).toEqual([]);
    expect(seen()).toEqual([]);
    await held;
    expect(levels).toEqual([1]); // NORMAL: no fsync of its own
    expect(seen()).toEqual(['delivered mark']);
  });

  it('goes before other bookkeeping, joins an unsynced group open now, and flushHeld writes it at once', async () => {
    const group = new GroupCommit(db, 60_000);
    const failedMark = group.writeHeld(() => note('failed mark'));
    group.writeUnsynced(() => note('next attempt counted'));
    const joined = group.writeHeld(() => note('joined'));
    expect(db.inTransaction).toBe(true);
    await Promise.all([failedMark, joined]);
    expect(seen()).toEqual(['failed mark', 'next attempt counted', 'joined']);

    const flushed = group.writeHeld(() => note('flushed'));
    await turn();
    expect(db.inTransaction).toBe(false);
    group.flushHeld();
    expect(db.inTransaction).toBe(true);
    await flushed;
    expect(seen()).toContain('flushed');
  });

  it('a held write that throws fails alone: the station change it waited for commits', async () => {
    const group = new GroupCommit(db, 60_000);
    const failing = group.writeHeld(() => {
      note('twice');
      note('twice');
    });
    const fine = group.writeHeld(() => note('fine'));
    group.writeNow(() => note('station change'));
    await expect(failing).rejects.toThrow(/UNIQUE/);
    await fine;
    expect(seen()).toEqual(['station change', 'fine']);
  });

  it('a held write outlives a station change that finds the disk full (SQLITE_FULL, for real): written with the next', async () => {
    const group = new GroupCommit(db, 60_000);
    let settled = false;
    const held = group.writeHeld(() => note('delivered mark')).finally(() => (settled = true));
    await turn();
    db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
    // A change that needs pages the file may not grow by: it fails; the mark waiting for a commit is not lost with it.
    expect(() => group.write(() => note('x'.repeat(20_000)))).toThrow(/full/);
    await turn();
    expect(settled).toBe(false);
    db.pragma('max_page_count = 1073741823');
    expect(seen()).toEqual([]);
    group.writeNow(() => note('station change'));
    await held;
    expect(seen()).toEqual(['station change', 'delivered mark']);
  });
});
