// Lines from the terminal (or any stream), one at a time, shared by the agent's prompt and its approval
// questions. End of input is `undefined`, which callers treat as "no": nothing is approved by a closed stdin.
// A wait can be withdrawn (its call was cancelled) without taking the line meant for the next question.

import { createInterface, type Interface } from 'node:readline';

export class LineReader {
  private readonly lines: string[] = [];
  private readonly waiting: ((line: string | undefined) => void)[] = [];
  private ended = false;
  private readonly rl: Interface;

  constructor(
    input: NodeJS.ReadableStream,
    private readonly output: NodeJS.WritableStream,
  ) {
    this.rl = createInterface({ input, terminal: false });
    this.rl.on('line', (line) => {
      const waiter = this.waiting.shift();
      if (waiter) waiter(line);
      else this.lines.push(line);
    });
    this.rl.on('close', () => {
      this.ended = true;
      for (const waiter of this.waiting.splice(0)) waiter(undefined);
    });
  }

  /**
   * Shows the prompt and resolves with the next line, or undefined at end of input or when `signal` aborts;
   * an aborted wait gives up its place, so the next line goes to whoever asks next.
   */
  next(prompt: string, signal?: AbortSignal): Promise<string | undefined> {
    if (signal?.aborted) return Promise.resolve(undefined);
    this.output.write(prompt);
    const queued = this.lines.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.ended) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const waiter = (line: string | undefined) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(line);
      };
      const onAbort = () => {
        const index = this.waiting.indexOf(waiter);
        if (index >= 0) this.waiting.splice(index, 1);
        resolve(undefined);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  close(): void {
    this.rl.close();
  }
}
