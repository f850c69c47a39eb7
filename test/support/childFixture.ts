import { type ChildProcess, spawn } from 'node:child_process';

const children = new Set<ChildProcess>();

/**
 * Starts test/integration/fixtures/<fixture>.ts in a child process with
 * `args`; `said` resolves once its output contains `text`. killChildren()
 * ends every child still running.
 */
export function startChild(fixture: string, args: readonly string[]): { child: ChildProcess; said: (text: string) => Promise<void> } {
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', './scripts/register-lua.mjs', `test/integration/fixtures/${fixture}.ts`, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  let out = '';
  const waiting = new Set<() => void>();
  child.stdout?.on('data', (chunk) => {
    out += String(chunk);
    for (const check of waiting) check();
  });
  const said = (text: string) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (!out.includes(text)) return;
        waiting.delete(check);
        resolve();
      };
      waiting.add(check);
      check();
    });
  return { child, said };
}

/** Kills (-9) every child startChild started that is still running. */
export function killChildren(): void {
  for (const child of children) child.kill('SIGKILL');
}
