/**
 * When each fault was active, on the shared time base, so the checker can
 * print the faults that were active around a violation.
 *
 *   const end = faults.begin('kill -9', 'n2');  ...  end();
 *   faults.instant('jump', 'n0', '+3000 ms');
 *   await faults.during('SIGSTOP', 'n1', () => pauseFor(900));
 */
import type { FaultRecord } from './types.js';
import { sharedNow } from './timeBase.js';

interface OpenFault {
  readonly id: number;
  readonly kind: string;
  readonly target: string;
  readonly detail: string | undefined;
  readonly from: number;
  to: number | undefined;
}

export class FaultLog {
  private readonly entries: OpenFault[] = [];

  /** Marks a fault as active from now; call the returned function when it ends (idempotent). */
  begin(kind: string, target: string, detail?: string): () => void {
    const entry: OpenFault = { id: this.entries.length + 1, kind, target, detail, from: sharedNow(), to: undefined };
    this.entries.push(entry);
    return () => {
      entry.to ??= sharedNow();
    };
  }

  /** A fault that happens at one instant (a clock jump, a connection reset). */
  instant(kind: string, target: string, detail?: string): void {
    this.begin(kind, target, detail)();
  }

  /** Runs `action` with the fault marked active for its duration. */
  async during<T>(kind: string, target: string, action: () => Promise<T>, detail?: string): Promise<T> {
    const end = this.begin(kind, target, detail);
    try {
      return await action();
    } finally {
      end();
    }
  }

  /** Every fault so far; those still active end "now". */
  records(): FaultRecord[] {
    const now = sharedNow();
    return this.entries.map((e) => ({
      id: e.id,
      kind: e.kind,
      target: e.target,
      ...(e.detail === undefined ? {} : { detail: e.detail }),
      from: e.from,
      to: e.to ?? now,
    }));
  }

  /** How often each kind of fault was injected, e.g. { 'kill -9': 4, 'SIGSTOP': 2 }. */
  counts(): Record<string, number> {
    return countFaults(this.records());
  }
}

export function countFaults(faults: readonly FaultRecord[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const f of faults) counts[f.kind] = (counts[f.kind] ?? 0) + 1;
  return counts;
}
