import { Client, FTPError } from 'basic-ftp';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { tempDirForTest } from '../support/for-test.js';
import { uploadHarnessForTest, type UploadHarness } from './upload-harness.js';

/**
 * Contract 11.3 / 11.4: the FTP upload locations (ftp-srv), tried with basic-ftp, an FTP client we did not write,
 * as a station uploading its diagnostics and as one trying to get out of its folder.
 */

const LOG_ID = 'a1b2c3d4e5f6a7b8c9d0';

async function loggedIn(h: UploadHarness, user: string, password: string): Promise<Client> {
  const client = new Client(5000);
  await client.access({ host: '127.0.0.1', port: h.ftpPort, user, password });
  return client;
}

/** The FTP reply code a refused command got. */
async function refusal(attempt: Promise<unknown>): Promise<number> {
  const err = await attempt.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'the command should have been refused').toBeInstanceOf(FTPError);
  return (err as FTPError).code;
}

describe('FTP log uploads', () => {
  it('keeps a file stored in passive mode; the user is spent by its session, a second login is refused', async () => {
    const h = await uploadHarnessForTest(1024 * 1024, { ftp: true });
    const grant = h.issue(LOG_ID);
    const client = await loggedIn(h, grant.ftp.user, grant.ftp.password);
    await client.uploadFrom(Readable.from([Buffer.from('diagnostics of CP001\n')]), 'CP001-diag.txt');
    expect(readFileSync(path.join(h.dataDir, 'logs', LOG_ID, 'CP001-diag.txt'), 'utf8')).toBe('diagnostics of CP001\n');
    expect(h.heard.map((e) => e.event)).toEqual(['receiving', 'arrived']);
    expect((await client.list()).map((f) => f.name)).toEqual(['CP001-diag.txt']);
    client.close();

    const second = new Client(5000);
    expect(
      await refusal(
        second.access({ host: '127.0.0.1', port: h.ftpPort, user: grant.ftp.user, password: grant.ftp.password }),
      ),
    ).toBe(530);
    second.close();
    const wrong = new Client(5000);
    const other = h.issue('b1b2c3d4e5f6a7b8c9d0');
    expect(
      await refusal(wrong.access({ host: '127.0.0.1', port: h.ftpPort, user: other.ftp.user, password: 'guess' })),
    ).toBe(530);
    wrong.close();
  });

  it('refuses 550 a second STOR in the session that stored its file, writing nothing: one file per collection', async () => {
    const h = await uploadHarnessForTest(1024 * 1024, { ftp: true });
    const grant = h.issue(LOG_ID);
    const client = await loggedIn(h, grant.ftp.user, grant.ftp.password);
    await client.uploadFrom(Readable.from([Buffer.from('the diagnostics')]), 'diag.txt');
    expect(await refusal(client.uploadFrom(Readable.from([Buffer.alloc(5000, 'x')]), 'more.txt'))).toBe(550);
    expect(await refusal(client.uploadFrom(Readable.from([Buffer.from('again')]), 'diag.txt'))).toBe(550);
    client.close();
    expect(h.onDisk()).toEqual([LOG_ID, `${LOG_ID}/diag.txt`]);
    expect(readFileSync(path.join(h.dataDir, 'logs', LOG_ID, 'diag.txt'), 'utf8')).toBe('the diagnostics');
    expect(h.heard.map((e) => e.event)).toEqual(['receiving', 'arrived']);
  });

  it('leaves SIGTERM, SIGINT and SIGQUIT to the daemon: ftp-srv would exit the process on them', async () => {
    const before = ['SIGTERM', 'SIGINT', 'SIGQUIT'].map((s) => process.listenerCount(s));
    await uploadHarnessForTest(1024, { ftp: true });
    expect(['SIGTERM', 'SIGINT', 'SIGQUIT'].map((s) => process.listenerCount(s))).toEqual(before);
  });

  it('refuses an expired user', async () => {
    const h = await uploadHarnessForTest(1024 * 1024, { ftp: true });
    const grant = h.issue(LOG_ID, 1000);
    h.clock.ms += 1000;
    const client = new Client(5000);
    expect(
      await refusal(
        client.access({ host: '127.0.0.1', port: h.ftpPort, user: grant.ftp.user, password: grant.ftp.password }),
      ),
    ).toBe(530);
    client.close();
    expect(h.onDisk()).toEqual([]);
  });

  it('refuses a STOR in a session whose upload location ended meanwhile (the collection failed)', async () => {
    const h = await uploadHarnessForTest(1024 * 1024, { ftp: true });
    const grant = h.issue(LOG_ID);
    const client = await loggedIn(h, grant.ftp.user, grant.ftp.password);
    h.grants.revoke(LOG_ID);
    expect(await refusal(client.uploadFrom(Readable.from([Buffer.from('late')]), 'late.log'))).toBe(550);
    client.close();
    expect(h.onDisk()).toEqual([]);
  });

  it('answers 552 to a file over logs.maxUploadBytes and removes the partial file', async () => {
    const h = await uploadHarnessForTest(1000, { ftp: true });
    const grant = h.issue(LOG_ID);
    const client = await loggedIn(h, grant.ftp.user, grant.ftp.password);
    expect(await refusal(client.uploadFrom(Readable.from([Buffer.alloc(5000, 'x')]), 'big.log'))).toBe(552);
    expect(h.onDisk()).toEqual([LOG_ID]);
    client.close();
  });

  it('confines a session to its folder: CWD, LIST, RETR, DELE, RNFR/RNTO, MKD, PORT, STOR with a path', async () => {
    const h = await uploadHarnessForTest(1024 * 1024, { ftp: true });
    const outsideDir = tempDirForTest('outside');
    const outside = path.join(outsideDir, 'secret.txt');
    writeFileSync(outside, 'not for stations');
    // A neighbour's upload: another collection's folder under the same root.
    const neighbour = h.issue('b1b2c3d4e5f6a7b8c9d0');
    await fetch(`${h.baseUrl}/uploads/${neighbour.http.token}/theirs.log`, { method: 'PUT', body: 'theirs' });
    const grant = h.issue(LOG_ID);
    const client = await loggedIn(h, grant.ftp.user, grant.ftp.password);
    const up = path.relative(path.join(h.dataDir, 'logs', LOG_ID), outside);

    expect(await refusal(client.cd('..'.repeat(1) + '/b1b2c3d4e5f6a7b8c9d0'))).toBe(550);
    expect(await refusal(client.cd(outsideDir))).toBe(550);
    await client.cdup();
    expect(await client.pwd()).toBe('/');
    // ftp-srv answers a LIST that failed 451.
    expect(await refusal(client.list('../b1b2c3d4e5f6a7b8c9d0'))).toBe(451);
    expect(await refusal(client.list(outsideDir))).toBe(451);
    const sink = new Writable({ write: (_c, _e, done) => done() });
    expect(await refusal(client.downloadTo(sink, up))).toBe(502);
    expect(await refusal(client.downloadTo(new PassThrough(), '../b1b2c3d4e5f6a7b8c9d0/theirs.log'))).toBe(502);
    expect(await refusal(client.remove(outside))).toBe(502);
    expect(await refusal(client.send(`RNFR ${up}`))).toBe(502);
    expect(await refusal(client.send(`RNTO ${up}`))).toBe(502);
    expect(await refusal(client.send('MKD ../escape'))).toBe(502);
    expect(await refusal(client.send('PORT 127,0,0,1,4,1'))).toBe(502);
    expect(await refusal(client.send('SITE CHMOD 777 /'))).toBe(502);
    expect(await refusal(client.uploadFrom(Readable.from([Buffer.from('x')]), up))).toBe(550);
    expect(await refusal(client.uploadFrom(Readable.from([Buffer.from('x')]), `${outsideDir}/planted`))).toBe(550);
    client.close();

    expect(readFileSync(outside, 'utf8')).toBe('not for stations');
    expect(h.onDisk()).toEqual(['b1b2c3d4e5f6a7b8c9d0', 'b1b2c3d4e5f6a7b8c9d0/theirs.log']);
  });

  it('cuts a stalled FTP upload when its window ends, keeping nothing, while /health answers at once', async () => {
    const h = await uploadHarnessForTest(1024 * 1024, { ftp: true });
    const grant = h.issue(LOG_ID, 2000);
    const client = await loggedIn(h, grant.ftp.user, grant.ftp.password);
    const started = performance.now();
    const trickle = new PassThrough();
    trickle.write('the first bytes, then nothing');
    const upload = client.uploadFrom(trickle, 'slow.log').then(
      () => 'completed',
      () => 'cut',
    );
    const healthMs: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      expect((await fetch(`${h.baseUrl}/health`)).status).toBe(200);
      healthMs.push(performance.now() - t);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await upload).toBe('cut');
    const cutAfterMs = performance.now() - started;
    expect(cutAfterMs).toBeGreaterThanOrEqual(1500);
    expect(cutAfterMs).toBeLessThan(8000);
    expect(Math.max(...healthMs)).toBeLessThan(1000);
    // The session and the transfer end at the window's end; the partial file goes with the transfer.
    await eventually(() => h.onDisk().length === 1, 5000, 'the partial file removed');
    expect(h.onDisk()).toEqual([LOG_ID]);
    trickle.destroy();
    client.close();
  });
});
