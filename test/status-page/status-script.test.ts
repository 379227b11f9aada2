import { describe, expect, it } from 'vitest';
import { cliFailure } from '../../src/cli/failure.js';
import { readStatusScript } from '../../src/status-page/page-assets.js';

describe('the status page script (src/status-page/browser/, compiled by npm run build)', () => {
  it('is a classic script, as <script src="status.js" defer> needs: strict, no import or export', () => {
    const script = readStatusScript();
    expect(script).toMatch(/^"use strict";\n/);
    expect(script).not.toMatch(/^(import|export)\b/m);
  });

  it('missing, stops the start with one line naming the file and what to do', () => {
    let thrown: unknown;
    try {
      readStatusScript('/nonexistent/status.js');
    } catch (err) {
      thrown = err;
    }
    expect(cliFailure(thrown)).toEqual({
      message: 'cannot read the status page script /nonexistent/status.js: ENOENT: run npm run build, or install again',
      exitCode: 1,
    });
  });
});
