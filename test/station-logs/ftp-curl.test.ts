import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDirForTest } from '../support/for-test.js';
import { uploadHarnessForTest } from './upload-harness.js';

/**
 * The FTP upload locations with curl, an FTP client we did not write and the one many stations' firmware is built on
 * (libcurl): passive upload, the size bound, and getting out of the folder. CI installs curl (.ci/run) and runs with
 * CI=true: there a missing curl fails the suite; on a machine without it this file is skipped.
 */

const CURL = '/usr/bin/curl';
const curlMissing = !existsSync(CURL);
if (curlMissing && process.env.CI === 'true') throw new Error(`${CURL} is missing (apt-get install curl)`);

function curl(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(CURL, ['-sS', '--max-time', '20', ...args], (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const LOG_ID = 'a1b2c3d4e5f6a7b8c9d0';

describe.skipIf(curlMissing)('FTP log uploads from curl', () => {
  it('keeps a passive upload, answers 552 past logs.maxUploadBytes, and lets nothing out of the folder', async () => {
    const h = await uploadHarnessForTest(1000, { ftp: true });
    const files = tempDirForTest('curl');
    const small = path.join(files, 'CP001-diag.txt');
    writeFileSync(small, 'uploaded by curl\n');
    const big = path.join(files, 'big.bin');
    writeFileSync(big, Buffer.alloc(5000, 'b'));
    const outside = path.join(files, 'secret.txt');
    writeFileSync(outside, 'not for stations');

    const grant = h.issue(LOG_ID);
    const at = `ftp://${grant.ftp.user}:${grant.ftp.password}@127.0.0.1:${h.ftpPort}`;
    // curl uses one connection per run: a first run spends the user, so each attempt below comes in its own grant.
    expect(await curl(['--ftp-pasv', '-T', small, `${at}/`])).toMatchObject({ code: 0 });
    expect(readFileSync(path.join(h.dataDir, 'logs', LOG_ID, 'CP001-diag.txt'), 'utf8')).toBe('uploaded by curl\n');
    expect((await curl(['--ftp-pasv', '-T', small, `${at}/again.txt`])).stderr).toMatch(/530|Access denied|Login/i);

    const next = (n: number) => {
      const g = h.issue(`b1b2c3d4e5f6a7b8c9d${n}`);
      return `ftp://${g.ftp.user}:${g.ftp.password}@127.0.0.1:${h.ftpPort}`;
    };
    const tooBig = await curl(['--ftp-pasv', '-T', big, `${next(0)}/`]);
    // curl's exit 70 (CURLE_REMOTE_DISK_FULL) is how it reads a 552.
    expect(tooBig).toMatchObject({ code: 70, stderr: expect.stringMatching(/Exceeded storage allocation/) });
    expect(h.onDisk()).not.toContainEqual(expect.stringMatching(/big\.bin/));

    const read = await curl(['--ftp-pasv', '--path-as-is', `${next(1)}/../../../../${outside}`]);
    expect(read.code).not.toBe(0);
    expect(read.stdout).not.toContain('not for stations');
    // `..` stops at the session's `/`: the listing is its own empty folder, not the neighbour's upload above.
    const list = await curl(['--ftp-pasv', '--path-as-is', `${next(2)}/../`]);
    expect(list.code).toBe(0);
    expect(list.stdout.trim()).toBe('');
    const dele = await curl(['--ftp-pasv', '-Q', `DELE ${outside}`, `${next(3)}/`]);
    expect(dele.code).not.toBe(0);
    const rename = await curl(['--ftp-pasv', '-Q', `RNFR ${outside}`, '-Q', 'RNTO /stolen', `${next(4)}/`]);
    expect(rename.code).not.toBe(0);
    const mkdirs = await curl(['--ftp-pasv', '--ftp-create-dirs', '-T', small, `${next(5)}/sub/dir/x.txt`]);
    expect(mkdirs.code).not.toBe(0);
    const active = await curl(['--ftp-port', '127.0.0.1', '-T', small, `${next(6)}/`]);
    expect(active.code).not.toBe(0);

    expect(readFileSync(outside, 'utf8')).toBe('not for stations');
    expect(h.onDisk().filter((f) => f.includes('/'))).toEqual([`${LOG_ID}/CP001-diag.txt`]);
  });
});
