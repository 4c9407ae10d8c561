// The order test files start in. vitest's own order runs the projects one after the other ("node", then
// "workers") and, without a results cache (a fresh clone, CI), keeps files in name order, so the few files that
// start a process or a browser could start last and leave the other workers idle. This order is the same with
// or without a cache: the files that start a process go first, each paired with a workers file (one mostly waits
// for its process, the other keeps the CPU busy), then the rest of the workers files, then the quick node files;
// larger files first within each kind.
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
    const paired = heavy.flatMap((spec, i) => [spec, ...workers.slice(i, i + 1)]);
    return Promise.resolve([...paired, ...workers.slice(heavy.length), ...quick]);
  }
}
