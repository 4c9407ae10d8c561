/** Phase durations of one request, rendered as a W3C `Server-Timing` header value. */
export class Timings {
  private readonly phases: [string, number][] = [];

  /** Runs `fn`, adding its duration to phase `name`. */
  async time<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const start = performance.now();
    try {
      return await fn();
    } finally {
      this.add(name, performance.now() - start);
    }
  }

  add(name: string, ms: number): void {
    const existing = this.phases.find((p) => p[0] === name);
    if (existing) existing[1] += ms;
    else this.phases.push([name, ms]);
  }

  header(): string {
    return this.phases.map(([n, ms]) => `${n};dur=${ms.toFixed(1)}`).join(', ');
  }
}
