import type { NodeOutcome } from '../shared/outcome.js';
import type { CliFailure } from './failure.js';

/** A node's outcome as --json prints it. */
export interface NodeReport {
  readonly node: string;
  readonly status: string;
  readonly ms?: number;
  readonly error?: string;
}

export interface ReportingChoice {
  /** One line of JSON instead of prose. */
  readonly json: boolean;
  /** Say nothing when the lock is busy (exit 75): every host of a cron job but one finds it so. */
  readonly quiet?: boolean;
}

/**
 * Where a command's words go. Results go to stdout, failures to stderr (for
 * exec, stdout belongs to the command). With --json each is one line of JSON,
 * so a script reads `outcome` and `exitCode` instead of parsing prose.
 */
export class Reporter {
  readonly json: boolean;
  readonly quiet: boolean;

  constructor(
    /** The subcommand, or '' before one was recognised. */
    readonly command: string,
    choice: ReportingChoice,
  ) {
    this.json = choice.json;
    this.quiet = choice.quiet === true;
  }

  /** A result on stdout: the human text, or the JSON document. */
  result(document: Record<string, unknown>, human: string): void {
    process.stdout.write(this.json ? `${JSON.stringify({ command: this.command || null, ...document })}\n` : `${human}\n`);
  }

  failure(failure: CliFailure, hint?: string): void {
    // The exit status still says busy; only the words are left out.
    if (this.quiet && failure.kind === 'busy') return;
    if (this.json) {
      const { argument, code, nodes } = failure.details;
      const document = {
        command: this.command || null,
        ok: false,
        outcome: failure.kind,
        exitCode: failure.exitCode,
        message: failure.message,
        ...(argument === undefined ? {} : { argument }),
        ...(code === undefined ? {} : { code }),
        ...(nodes === undefined ? {} : { nodes: nodes.map(nodeReport) }),
      };
      process.stderr.write(`${JSON.stringify(document)}\n`);
      return;
    }
    const prefix = this.command ? `quorumlock ${this.command}` : 'quorumlock';
    process.stderr.write(`${prefix}: ${failure.message}\n${hint ? `${hint}\n` : ''}`);
  }
}

export function nodeReport(outcome: NodeOutcome): NodeReport {
  return {
    node: outcome.node,
    status: outcome.status,
    ms: Math.round(outcome.ms * 10) / 10,
    ...(outcome.error ? { error: outcome.error.message } : {}),
  };
}
