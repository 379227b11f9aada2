import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import GithubSlugger from 'github-slugger';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

/** The manual: what a reader opens on GitHub or in the package. */
const MANUAL = [
  'README.md',
  'CONTRIBUTING.md',
  'scripts/bench/README.md',
  ...markdownUnder('docs').map((file) => path.join('docs', file)),
];
/** Where code, tests and configs cite the manual by file and anchor. */
const CITING = ['src', 'test', 'scripts', 'systemd', 'config', 'packaging', '.ci', 'docs/partners/receivers'];
const CITING_FILES = ['vitest.config.ts', 'eslint.config.js'];

function markdownUnder(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.md'))
    .sort();
}

function filesUnder(dir: string): string[] {
  if (!existsSync(path.join(ROOT, dir))) return [];
  return readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .map((file) => path.join(dir, file))
    .filter((file) => statSync(path.join(ROOT, file)).isFile());
}

/** The text outside fenced code blocks and inline code, where a link is a link. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** The anchors GitHub makes for a Markdown file's headings (github-slugger: lowercase, duplicates -1, -2). */
const anchorCache = new Map<string, Set<string>>();
function anchorsOf(file: string): Set<string> {
  let anchors = anchorCache.get(file);
  if (!anchors) {
    const slugger = new GithubSlugger();
    const headings = prose(readFileSync(path.join(ROOT, file), 'utf8')).matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm);
    anchors = new Set([...headings].map((heading) => slugger.slug(heading[1]!)));
    anchorCache.set(file, anchors);
  }
  return anchors;
}

/** Why `target` (a repository path, maybe with #anchor) does not resolve, or undefined when it does. */
function unresolved(target: string): string | undefined {
  const [file, anchor] = target.split('#') as [string, string | undefined];
  if (!existsSync(path.join(ROOT, file))) return 'no such file';
  if (anchor === undefined) return undefined;
  if (!file.endsWith('.md')) return 'an anchor in a file that is not Markdown';
  return anchorsOf(file).has(anchor) ? undefined : `no heading makes #${anchor}`;
}

interface Link {
  from: string;
  href: string;
  /** The repository path the link points at, with its #anchor. */
  target: string;
}

function relativeLinks(file: string): Link[] {
  const links = [...prose(readFileSync(path.join(ROOT, file), 'utf8')).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)];
  return links
    .map((match) => match[1]!)
    .filter((href) => !/^[a-z][a-z0-9+.-]*:/i.test(href))
    .map((href) => {
      const target = href.startsWith('#') ? `${file}${href}` : path.join(path.dirname(file), href);
      return { from: file, href, target: path.relative(ROOT, path.resolve(ROOT, target)) };
    });
}

function brokenLinks(files: string[]): string[] {
  return files.flatMap((file) =>
    relativeLinks(file).flatMap(({ from, href, target }) => {
      const why = unresolved(target);
      return why ? [`${from}: (${href}) ${why}`] : [];
    }),
  );
}

describe('the manual', () => {
  it('finds the documents and their headings (github-slugger slugs as GitHub makes them)', () => {
    expect(MANUAL).toContain('docs/partners/webhooks.md');
    expect(anchorsOf('docs/partners/webhooks.md')).toContain('receiving-webhooks-partners');
    expect(anchorsOf('docs/install/installers-guide.md')).toContain('installers-guide');
    expect(anchorsOf('README.md')).toContain('the-two-commands');
  });

  it('has no relative link or anchor that does not resolve in README.md, CONTRIBUTING.md or docs/', () => {
    expect(brokenLinks(MANUAL)).toEqual([]);
  });

  it('tells a broken file, a broken anchor and a fenced example apart', () => {
    expect(unresolved('docs/partners/nothing-here.md')).toBe('no such file');
    expect(unresolved('docs/partners/webhooks.md#no-such-heading')).toBe('no heading makes #no-such-heading');
    expect(unresolved('docs/partners/webhooks.md#choosing-ed25519')).toBeUndefined();
    expect(prose('a [real](x.md)\n```md\n[fenced](y.md)\n```\n`[inline](z.md)`')).not.toMatch(/y\.md|z\.md/);
  });

  it('gives partners a docs/partners/ that links nowhere else (the OpenAPI document is served, not linked)', () => {
    const partners = MANUAL.filter((file) => file.startsWith('docs/partners/'));
    const outside = partners.flatMap((file) =>
      relativeLinks(file)
        .filter(({ target }) => !target.startsWith('docs/partners/'))
        .map(({ from, href }) => `${from}: (${href})`),
    );
    expect(partners.length).toBeGreaterThan(3);
    expect(outside).toEqual([]);
  });
});

describe('citations of the manual in code, tests and configs', () => {
  // This file names missing documents on purpose, to see them refused.
  const files = [...CITING.flatMap(filesUnder), ...CITING_FILES].filter(
    (file) => !file.endsWith('.md') && file !== 'test/docs/links.test.ts',
  );
  const text = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

  it('cite docs/<file>.md#anchor (or README.md#, CONTRIBUTING.md#) that exist', () => {
    const citation = /(?<![\w/.-])((?:docs\/[\w./-]+|README|CONTRIBUTING)\.md)(#[\w-]+)?/g;
    const broken = files.flatMap((file) =>
      [...text(file).matchAll(citation)].flatMap((match) => {
        const target = match[1]! + (match[2] ?? '');
        const why = unresolved(target);
        return why ? [`${file}: ${target} ${why}`] : [];
      }),
    );
    expect(broken).toEqual([]);
  });

  it('no longer cite a README heading by its title', () => {
    const byTitle = new RegExp(['README', '\\s*\\(?\\s*"[A-Z]'].join(''));
    expect(files.filter((file) => byTitle.test(text(file)))).toEqual([]);
  });
});
