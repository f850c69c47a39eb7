/**
 * `tsx bench/held/profileSummary.ts FILE.cpuprofile [TOP]`: where a held
 * child's CPU went (bench:held --profile DIR): self time by function and by
 * file, as shares of the samples that were not idle, so two profiles of
 * different lengths compare.
 */
import { readFile } from 'node:fs/promises';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly startTime: number;
  readonly endTime: number;
}

/** Waiting in the event loop; '(program)' is native work outside JS and counts as busy. */
const IDLE = '(idle)';

function shortUrl(url: string): string {
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) return url.slice(modules + 'node_modules/'.length);
  return url.replace(/^.*\/(quorumlock-bench\/runs\/\d+\/)/, '') || '(native)';
}

function top(counts: Map<string, number>, total: number, n: number): string[] {
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, count]) => `${((100 * count) / total).toFixed(1).padStart(5)} %  ${name}`);
}

async function main(): Promise<void> {
  const [file, topArg] = process.argv.slice(2);
  if (file === undefined) throw new Error('usage: tsx bench/held/profileSummary.ts FILE.cpuprofile [TOP]');
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  let busy = 0;
  let idle = 0;
  for (const id of profile.samples) {
    const node = byId.get(id);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === IDLE) {
      idle++;
      continue;
    }
    busy++;
    const where = shortUrl(url);
    const name = `${functionName || '(anonymous)'}  ${where}:${lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + 1);
    byFile.set(where, (byFile.get(where) ?? 0) + 1);
  }
  const n = Number(topArg ?? 40);
  const seconds = (profile.endTime - profile.startTime) / 1e6;
  process.stdout.write(
    [
      `${file}: ${seconds.toFixed(1)} s, ${busy} busy samples, ${idle} idle`,
      '',
      'self time by function:',
      ...top(byFunction, busy, n),
      '',
      'self time by file:',
      ...top(byFile, busy, 20),
      '',
    ].join('\n'),
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
