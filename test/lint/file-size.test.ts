import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

/** Hand-written files of src/ stay at most this long (CONTRIBUTING.md#working-on-chargegate); lint's max-lines says so too. */
const MAX_LINES = 600;
/** Generated from ocpp-rpc's schemas (npm run generate:ocpp-types), never edited by hand. */
const GENERATED = /^src\/ocpp\/v(16|201)\/messages\.ts$/;

describe('file size (npm run lint)', () => {
  it(`no hand-written file in src/ is over ${MAX_LINES} lines`, () => {
    const files = readdirSync(path.join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
      .map((file) => `src/${file}`)
      .filter((file) => file.endsWith('.ts') && !GENERATED.test(file));
    expect(files.length).toBeGreaterThan(100);
    const tooLong = files
      .map((file) => ({ file, lines: readFileSync(path.join(ROOT, file), 'utf8').split('\n').length - 1 }))
      .filter(({ lines }) => lines > MAX_LINES);
    expect(tooLong).toEqual([]);
  });
});
