/**
 * jieba's dictionary module reads 11 MB into memory when it loads: the tokenizer loads it only
 * once it meets Han text. Checked in a process of its own, whose module cache no other test shares.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { REPO } from '../support/processes.ts';

const SCRIPT = `
import { createRequire } from 'node:module';
import { tokenize } from './actors/memory/lexicon.ts';
const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((path) => path.includes('@node-rs/jieba/dict.js'));
const english = tokenize('I planted tomatoes in the garden today');
const beforeHan = loaded();
const chinese = tokenize('我今天在花园里种了西红柿');
console.log(JSON.stringify({ english: english.length > 0, beforeHan, afterHan: loaded(), chinese }));
`;

describe('jieba segmenter', () => {
  it('loads its dictionary only when the tokenizer first meets Han text, and then segments it', () => {
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT], { cwd: REPO, encoding: 'utf8' });
    const seen = JSON.parse(out) as { english: boolean; beforeHan: boolean; afterHan: boolean; chinese: string[] };
    expect(seen.english).toBe(true);
    expect(seen.beforeHan, 'English text loaded the dictionary').toBe(false);
    expect(seen.afterHan).toBe(true);
    expect(seen.chinese).toContain('西红柿');
  });
});
