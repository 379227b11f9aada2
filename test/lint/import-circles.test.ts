import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';
import { tempDirForTest } from '../support/for-test.js';

/** `npm run lint:circles` as package.json has it, run in `cwd` with the project's tools on the PATH. */
async function lintCircles(cwd: string): Promise<{ code: number; output: string }> {
  const { scripts } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const env = { ...process.env, PATH: `${path.join(ROOT, 'node_modules/.bin')}:${process.env.PATH}` };
  try {
    const { stdout, stderr } = await promisify(execFile)('sh', ['-c', scripts['lint:circles']!], { cwd, env });
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const failed = err as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: failed.stdout + failed.stderr };
  }
}

describe('import circles (npm run lint)', () => {
  it('src/ has none, type-only imports counted', async () => {
    const { code, output } = await lintCircles(ROOT);
    expect(output).toContain('no circular dependency');
    expect(code).toBe(0);
  });

  it('the next one, even of types only, fails lint naming its files', async () => {
    const project = tempDirForTest('import-circle');
    mkdirSync(path.join(project, 'src'));
    copyFileSync(path.join(ROOT, 'tsconfig.json'), path.join(project, 'tsconfig.json'));
    writeFileSync(path.join(project, 'src/a.ts'), "import type { B } from './b.js';\nexport interface A { b?: B }\n");
    writeFileSync(path.join(project, 'src/b.ts'), "import type { A } from './a.js';\nexport interface B { a?: A }\n");
    const { code, output } = await lintCircles(project);
    expect(code).toBe(1);
    expect(output).toMatch(/src\/[ab]\.ts -> src\/[ab]\.ts/);
  });
});
