/**
 * The choosing-a-lock guide quotes bench:systems' figures only through its
 * generated block: the page must hold exactly what bench/systems/docs.ts
 * renders from the committed docs/data/systems.json (`npm run docs:systems`
 * rewrites it).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { END, GUIDE, renderGuideBlock, RESULTS, START } from '../../bench/systems/docs.js';
import type { SystemsResult } from '../../bench/systems/results.js';

describe('docs/guide/choosing-a-lock.md', () => {
  it("holds the table generated from docs/data/systems.json, unedited", () => {
    const page = readFileSync(GUIDE, 'utf8');
    const result = JSON.parse(readFileSync(RESULTS, 'utf8')) as SystemsResult;
    const start = page.indexOf(START);
    const end = page.indexOf(END);
    expect(start).toBeGreaterThan(-1);
    expect(end).toBeGreaterThan(start);
    expect(page.slice(start, end + END.length)).toBe(renderGuideBlock(result));
  });
});
