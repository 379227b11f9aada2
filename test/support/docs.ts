import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './cli.js';

/**
 * The body of the fenced block named `name` (```lang name=NAME) in a Markdown file of the repository: examples that
 * tests run are found by their name, so moving or retitling the text around them does not lose them.
 */
export function namedFence(file: string, name: string): string {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const block = new RegExp('^```\\S*[ \\t]+name=' + escaped + '[ \\t]*\\n([\\s\\S]*?)^```', 'm').exec(text);
  if (!block) throw new Error(`${file} has no fenced block named ${name}`);
  return block[1]!;
}
