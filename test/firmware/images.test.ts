import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { addImage, findImage, firmwareDir, listImages, removeImage } from '../../src/firmware/index.js';
import { tempDirForTest } from '../support/for-test.js';
import { databasePerTest } from '../support/temp-database.js';

/** Contract 11.2: `firmware add` stores an image whole with its SHA-256, within its bounds, or leaves nothing. */
describe('firmware images', () => {
  const site = databasePerTest();
  const bounds = { maxImageBytes: 1000, maxTotalBytes: 1500 };

  function imageFile(name: string, bytes: number, fill = 1): string {
    const file = path.join(tempDirForTest('image'), name);
    writeFileSync(file, Buffer.alloc(bytes, fill));
    return file;
  }

  /** What dataDir/firmware holds: the stored images only, no partial copy left behind. */
  const stored = (): string[] =>
    existsSync(firmwareDir(site.temp.dataDir)) ? readdirSync(firmwareDir(site.temp.dataDir)).sort() : [];

  it('copies the image under its id, with its SHA-256, size and URL-safe file name', async () => {
    const file = imageFile('station fw v2.bin', 700);
    const image = await addImage(site.db, site.temp.dataDir, bounds, { file, firmwareVersion: '2.0.0' });
    const sha256 = createHash('sha256').update(readFileSync(file)).digest('hex');
    expect(image).toMatchObject({ sha256, size: 700, fileName: 'station_fw_v2.bin', firmwareVersion: '2.0.0' });
    expect(image.imageId).toBe(sha256.slice(0, 12));
    expect(stored()).toEqual([image.imageId]);
    expect(readFileSync(path.join(firmwareDir(site.temp.dataDir), image.imageId))).toEqual(readFileSync(file));
    expect(listImages(site.db)).toEqual([image]);
  });

  it('refuses an image over firmware.maxImageBytes and leaves nothing behind', async () => {
    await expect(addImage(site.db, site.temp.dataDir, bounds, { file: imageFile('big.bin', 1001) })).rejects.toThrow(
      /larger than firmware.maxImageBytes \(1000 bytes\)/,
    );
    expect(stored()).toEqual([]);
    expect(listImages(site.db)).toEqual([]);
  });

  it('refuses an image that does not fit in what firmware.maxTotalBytes leaves, and leaves nothing behind', async () => {
    const first = await addImage(site.db, site.temp.dataDir, bounds, { file: imageFile('a.bin', 900, 1) });
    await expect(addImage(site.db, site.temp.dataDir, bounds, { file: imageFile('b.bin', 700, 2) })).rejects.toThrow(
      /take 900 of firmware.maxTotalBytes \(1500 bytes\)/,
    );
    expect(stored()).toEqual([first.imageId]);
    expect(listImages(site.db).map((i) => i.imageId)).toEqual([first.imageId]);
  });

  it('counts while it copies: a file that grows past the bound after the check is refused, nothing left', async () => {
    const file = imageFile('growing.bin', 10);
    const adding = addImage(site.db, site.temp.dataDir, bounds, { file });
    // Written after the size check, before the copy reads it (the copy starts on a later turn).
    writeFileSync(file, Buffer.alloc(5000, 3));
    await expect(adding).rejects.toThrow(/larger than firmware.maxImageBytes/);
    expect(stored()).toEqual([]);
    expect(listImages(site.db)).toEqual([]);
  });

  it('refuses the same image twice, naming the stored one', async () => {
    const file = imageFile('a.bin', 100);
    const image = await addImage(site.db, site.temp.dataDir, bounds, { file });
    await expect(addImage(site.db, site.temp.dataDir, bounds, { file })).rejects.toThrow(
      `stored already as ${image.imageId}`,
    );
    expect(stored()).toEqual([image.imageId]);
  });

  it('keeps a signature and signing certificate within 2.0.1 bounds, and only together', async () => {
    const file = imageFile('signed.bin', 100);
    await expect(
      addImage(site.db, site.temp.dataDir, bounds, { file, signature: 'x'.repeat(801), signingCertificate: 'c' }),
    ).rejects.toThrow(/800 characters/);
    await expect(addImage(site.db, site.temp.dataDir, bounds, { file, signature: 'c2ln' })).rejects.toThrow(
      /go together/,
    );
    const image = await addImage(site.db, site.temp.dataDir, bounds, {
      file,
      signature: 'c2ln',
      signingCertificate: '-----BEGIN CERTIFICATE-----',
    });
    expect(findImage(site.db, image.imageId)).toMatchObject({ signature: 'c2ln' });
  });

  it('removes an image, its row and its file', async () => {
    const image = await addImage(site.db, site.temp.dataDir, bounds, { file: imageFile('a.bin', 100) });
    removeImage(site.db, site.temp.dataDir, image.imageId);
    expect(stored()).toEqual([]);
    expect(listImages(site.db)).toEqual([]);
    expect(() => removeImage(site.db, site.temp.dataDir, image.imageId)).toThrow(/no firmware image/);
  });

  it('refuses to remove an image a rollout not finished uses', async () => {
    const image = await addImage(site.db, site.temp.dataDir, bounds, { file: imageFile('a.bin', 100) });
    site.db
      .prepare(
        `INSERT INTO firmware_rollouts (id, image_id, parallel, force, continue_on_failure, who, created_at, state)
         VALUES ('ro-1', ?, 1, 0, 0, 'cli', '2026-11-29T00:00:00.000Z', 'running')`,
      )
      .run(image.imageId);
    site.db
      .prepare(
        `INSERT INTO firmware_rollout_stations (rollout_id, station_id, position, state) VALUES ('ro-1', 'CP001', 0, 'waiting')`,
      )
      .run();
    expect(() => removeImage(site.db, site.temp.dataDir, image.imageId)).toThrow(/used by rollout ro-1/);
    expect(stored()).toEqual([image.imageId]);
  });
});
