/** Progress lines on stderr, so stdout carries only the report. */
export class Progress {
  private done = 0;
  private readonly startedAt = Date.now();

  constructor(private readonly total: number) {}

  /** One measurement finished. */
  step(text: string): void {
    this.done++;
    const width = String(this.total).length;
    const elapsed = ((Date.now() - this.startedAt) / 1000).toFixed(0).padStart(4);
    process.stderr.write(`[${String(this.done).padStart(width)}/${this.total} ${elapsed}s] ${text}\n`);
  }

  note(text: string): void {
    process.stderr.write(`  ${text}\n`);
  }
}
