// The order test files start in. vitest's own order runs the projects one after the other ("node", then
// "workers") and, without a results cache (a fresh clone, CI), keeps files in name order, so the few files that
// start a process or a browser could start last and leave the other workers idle. This order is the same with
// or without a cache: the files that start a process go first (they mostly wait for their processes, which keep
// the CPU busy), then the workers files, then the quick node files; larger files first within each kind.
//
// Files of one project follow each other, never alternate with another project's. vitest 4 keeps a worker (isolate:
// false) for the next file only when the next file in the queue is of the same project (Pool.schedule in
// vitest/dist/chunks/cli-api.*.js: `isEqualRunner(runner, this.queue[0].task)`); otherwise it stops the worker, and
// the next workers file starts a new workerd, about 3 s of CPU. Pairing each process-starting file with a workers
// file, as this order did before, started 11 workerd and 11 forks per run instead of about 5 of each: 50 s of CPU
// out of 330. The files that get a workerd of their own (OWN_ISOLATE in vitest.config.ts) start where the switch
// from the node files happens anyway, before the shared workers files.
import { readFileSync, statSync } from 'node:fs';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** A node test file that starts `npm run dev`, a wrangler process, a seeded Worker or a browser. */
const STARTS_A_PROCESS = /from '\.\/(mcp-dev-instance|browser|browser-pages|seeded-worker)\.mjs'|from 'node:child_process'/;

export class SuiteSequencer extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const size = new Map(files.map((f) => [f, statSync(f.moduleId).size]));
    const bySizeDescending = (a: TestSpecification, b: TestSpecification) => (size.get(b) ?? 0) - (size.get(a) ?? 0);
    const heavy: TestSpecification[] = [];
    const workers: TestSpecification[] = [];
    const quick: TestSpecification[] = [];
    for (const spec of files) {
      if (spec.project.name !== 'node') workers.push(spec);
      else if (STARTS_A_PROCESS.test(readFileSync(spec.moduleId, 'utf8'))) heavy.push(spec);
      else quick.push(spec);
    }
    for (const kind of [heavy, workers, quick]) kind.sort(bySizeDescending);
    const ownIsolate = workers.filter((spec) => spec.project.config.isolate);
    // Each project's shared files together (see above), the smaller project first: its files wait on the warehouse's
    // slow jobs, so they start while there is still other work to overlap them.
    const shared = workers.filter((spec) => !spec.project.config.isolate);
    const projects = [...new Set(shared.map((spec) => spec.project.name))];
    const count = (name: string) => shared.filter((spec) => spec.project.name === name).length;
    projects.sort((a, b) => count(a) - count(b));
    const grouped = projects.flatMap((name) => shared.filter((spec) => spec.project.name === name));
    return Promise.resolve([...heavy, ...ownIsolate, ...grouped, ...quick]);
  }
}
