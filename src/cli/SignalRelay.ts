import type { RunningCommand } from './spawnCommand.js';

/** The signals a supervisor is expected to pass on to what it supervises. */
export const FORWARDED_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Owns SIGINT, SIGTERM and SIGHUP for the life of `exec`. While a command
 * runs they are forwarded to it, and quorumlock keeps running so it can
 * release the lock once the command exits. Before that (connecting, waiting
 * for the lock) the first one aborts `signal`, which stops the wait.
 */
export class SignalRelay {
  readonly #controller = new AbortController();
  #command: RunningCommand | undefined;
  #received: NodeJS.Signals | undefined;
  #onInterrupt: (() => void) | undefined;

  readonly #onSignal = (signal: NodeJS.Signals): void => {
    if (this.#command) {
      this.#command.signal(signal);
      return;
    }
    this.#received ??= signal;
    this.#controller.abort(new Error(`received ${signal}`));
    this.#onInterrupt?.();
  };

  constructor() {
    for (const signal of FORWARDED_SIGNALS) process.on(signal, this.#onSignal);
  }

  /** Aborts when a signal arrives while no command runs. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The first signal received while no command ran. */
  get received(): NodeJS.Signals | undefined {
    return this.#received;
  }

  /** Also called when a signal arrives while no command runs (the locker's close()). */
  onInterrupt(callback: () => void): void {
    this.#onInterrupt = callback;
  }

  /** Forward signals to `command` until detach(). */
  attach(command: RunningCommand): void {
    this.#command = command;
  }

  detach(): void {
    this.#command = undefined;
  }

  /** Gives the signals back to Node's defaults. */
  dispose(): void {
    this.#command = undefined;
    for (const signal of FORWARDED_SIGNALS) process.off(signal, this.#onSignal);
  }
}
