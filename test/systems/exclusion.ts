/**
 * Reads back the file the correctness tests' workers write ("enter <pid>",
 * "exit <pid>" around each hold) and says where two holds overlapped.
 */
import { readFileSync } from 'node:fs';

export interface ExclusionCheck {
  readonly sections: number;
  /** Lines where a process entered while another was inside, or left without being inside. */
  readonly overlaps: readonly string[];
}

export function checkExclusion(file: string): ExclusionCheck {
  const lines = readFileSync(file, 'utf8').trim().split('\n').filter(Boolean);
  const overlaps: string[] = [];
  let inside: string | undefined;
  let sections = 0;
  for (const [index, line] of lines.entries()) {
    const [event, pid] = line.split(' ');
    if (event === 'enter') {
      if (inside !== undefined) overlaps.push(`line ${index + 1}: ${pid} entered while ${inside} held the lock`);
      inside = pid;
      sections++;
    } else {
      if (inside !== pid) overlaps.push(`line ${index + 1}: ${pid} left while ${inside ?? 'nobody'} was inside`);
      inside = undefined;
    }
  }
  return { sections, overlaps };
}
