/**
 * One contender's procs measurements on one topology, gathered round by
 * round into the result the report reads: medians, commands by name, and
 * whether it was cut off.
 */
import type { Contender } from '../contenders/index.js';
import { type ContenderResult, emptyResult } from '../results.js';
import { medianSample } from '../runner.js';
import type { CommandStats } from '../serverStats.js';
import type { ProcsMeasurement } from './measure.js';

export class Tally {
  private readonly result: ContenderResult;
  private readonly commands: CommandStats = new Map();
  private sections = 0;
  private readonly unfinished: string[] = [];

  constructor(contender: Contender, nodes: number) {
    this.result = emptyResult(contender, nodes);
  }

  add(round: number, measured: ProcsMeasurement): void {
    this.result.rounds.push(measured.analysis?.sample ?? {});
    this.sections += measured.analysis?.sections ?? 0;
    if (measured.unfinished !== undefined) {
      this.unfinished.push(measured.unfinished.status);
      this.result.notes.push(`round ${round + 1}: ${measured.unfinished.detail}`);
    }
    for (const note of measured.notes) this.result.notes.push(`round ${round + 1}: ${note}`);
    for (const [name, entry] of measured.commands) {
      const sum = this.commands.get(name) ?? { calls: 0, usec: 0 };
      sum.calls += entry.calls;
      sum.usec += entry.usec;
      this.commands.set(name, sum);
    }
  }

  finish(): ContenderResult {
    const { result } = this;
    result.median = medianSample(result.rounds);
    const [first] = this.unfinished;
    if (first !== undefined) {
      const rounds = result.rounds.length;
      result.unfinished = rounds === 1 ? first : `${first} (${this.unfinished.length} of ${rounds} rounds)`;
    }
    if (this.sections > 0) {
      for (const [name, entry] of this.commands) {
        result.commandsPerCycle[name] = entry.calls / this.sections;
        result.usecPerCall[name] = entry.usec / entry.calls;
      }
    }
    return result;
  }
}
