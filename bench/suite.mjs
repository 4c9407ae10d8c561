#!/usr/bin/env node
// `node bench/suite.mjs [vitest args...]`: runs the suite (`vitest run`, or what the arguments name) and says where
// its time and CPU went, for the 180 s target of docs/testing.md: vitest's wall time, how busy the machine's cores
// were over it, CPU seconds by kind of process (Chromium, workerd, vitest, esbuild, wrangler, the repository's
// scripts) and by command, the heaviest processes, the slowest files with when they started. On Linux the CPU comes
// from /proc, sampled every 500 ms (a process that lives under half a second can be missed: the per-kind figures
// are a floor, the machine's busy time is exact); elsewhere only the wall time and the files are shown.
// Writes bench/out/suite.json. Run it on a quiet machine: the figures are the machine's, not only the suite's.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { ROOT } from '../scripts/lib/import-ts.mjs';

const OUT_DIR = join(ROOT, 'bench', 'out');
const REPORT = join(OUT_DIR, 'suite-vitest.json');
const PROC = existsSync('/proc/stat');
const SAMPLE_MS = 500;

/** The kind a process is counted under, by its command line. @param {string} cmd */
function kindOf(cmd) {
  if (/chrom/.test(cmd)) return 'chromium';
  if (/workerd/.test(cmd)) return 'workerd';
  if (/esbuild/.test(cmd)) return 'esbuild';
  if (/wrangler(-dist\/cli\.js|\/bin\/|\.mjs)/.test(cmd)) return 'wrangler (real and stand-in)';
  if (/vitest/.test(cmd)) return 'vitest (main and its workers)';
  if (/conformance/.test(cmd)) return 'MCP conformance runner';
  if (/(dev|scripts|bench)\/[\w-]+\.mjs/.test(cmd)) return 'repository scripts (run-dev, admin, setup, ...)';
  return 'other';
}

/** Busy and total clock ticks of the whole machine, from the first line of /proc/stat. */
async function machineTicks() {
  const [cpu] = (await readFile('/proc/stat', 'utf8')).split('\n');
  const [user, nice, system, idle, iowait, irq, softirq, steal] = (cpu ?? '').trim().split(/\s+/).slice(1).map(Number);
  const busy = user + nice + system + irq + softirq + steal;
  return { busy, total: busy + idle + iowait };
}

/**
 * Every process's CPU so far (user + system ticks), keyed by pid and start time, with its command line. Read with
 * the synchronous calls: a pass reads a few hundred small /proc files, and the promise per file made this sampler
 * itself use about 5% of the machine during a suite run.
 */
function processTicks(/** @type {Map<string, { cmd: string, first: number, ticks: number }>} */ seen) {
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const key = `${pid}:${fields[19]}`;
      const ticks = Number(fields[11]) + Number(fields[12]);
      const known = seen.get(key);
      if (known) known.ticks = ticks;
      else seen.set(key, { cmd: readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' '), first: ticks, ticks });
    } catch {
      // gone between the listing and the read
    }
  }
}

const args = process.argv.slice(2);
await mkdir(OUT_DIR, { recursive: true });
/** @type {Map<string, { cmd: string, first: number, ticks: number }>} */
const seen = new Map();
if (PROC) processTicks(seen);
const before = new Set(seen.keys());
const t0 = PROC ? await machineTicks() : null;
const started = performance.now();
let sampling = PROC;
const sampler = (async () => {
  while (sampling) {
    processTicks(seen);
    await new Promise((r) => setTimeout(r, SAMPLE_MS));
  }
})();
const code = await new Promise((resolve) => {
  const child = spawn(
    process.execPath,
    [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--reporter=dot', '--reporter=json', `--outputFile=${REPORT}`, ...args],
    { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  child.on('close', resolve);
});
sampling = false;
await sampler;
const wallS = (performance.now() - started) / 1000;
const t1 = PROC ? await machineTicks() : null;

// Ticks are USER_HZ, 100 per second on Linux.
const HZ = 100;
/** @type {Record<string, number>} */
const byKind = {};
/** @type {{ cpuSeconds: number, cmd: string }[]} */
const heaviest = [];
for (const [key, p] of seen) {
  const used = before.has(key) ? p.ticks - p.first : p.ticks;
  if (used <= 0) continue;
  const kind = kindOf(p.cmd);
  byKind[kind] = (byKind[kind] ?? 0) + used / HZ;
  heaviest.push({ cpuSeconds: used / HZ, cmd: p.cmd.slice(0, 300) });
}
heaviest.sort((a, b) => b.cpuSeconds - a.cpuSeconds);

/** CPU and process count per command (its first words, paths cut to file names), heaviest first. */
function byCommand(/** @type {{ cpuSeconds: number, cmd: string }[]} */ processes) {
  /** @type {Map<string, { cpuSeconds: number, processes: number }>} */
  const sums = new Map();
  for (const p of processes) {
    const words = p.cmd
      .split(' ')
      .filter((w) => w !== '' && !w.startsWith('-'))
      .slice(0, 3)
      .map((w) => w.split('/').pop());
    const key = words.join(' ');
    const sum = sums.get(key) ?? { cpuSeconds: 0, processes: 0 };
    sum.cpuSeconds += p.cpuSeconds;
    sum.processes += 1;
    sums.set(key, sum);
  }
  return [...sums]
    .map(([command, sum]) => ({ command, ...sum }))
    .sort((a, b) => b.cpuSeconds - a.cpuSeconds)
    .slice(0, 40);
}
const report = JSON.parse(await readFile(REPORT, 'utf8'));
const firstStart = Math.min(...report.testResults.map((/** @type {any} */ f) => f.startTime));
const files = report.testResults
  .map((/** @type {any} */ f) => ({
    file: relative(ROOT, f.name),
    startS: (f.startTime - firstStart) / 1000,
    seconds: (f.endTime - f.startTime) / 1000,
  }))
  .sort((/** @type {any} */ a, /** @type {any} */ b) => b.seconds - a.seconds);
const machine =
  t0 && t1
    ? {
        busyCpuSeconds: (t1.busy - t0.busy) / HZ,
        coreSeconds: (t1.total - t0.total) / HZ,
        busyShare: (t1.busy - t0.busy) / (t1.total - t0.total),
      }
    : null;
const summary = {
  wallSeconds: wallS,
  exitCode: code,
  machine,
  cpuSecondsByKind: byKind,
  slowestFiles: files.slice(0, 15),
  files: files.length,
  // The processes that used the most CPU, for finding which of a kind's processes it was.
  heaviestProcesses: heaviest.slice(0, 40),
  // Every process by what it ran (the first three words of its command line with paths cut to the file name).
  cpuSecondsByCommand: byCommand(heaviest),
  processCount: heaviest.length,
};
await writeFile(join(OUT_DIR, 'suite.json'), `${JSON.stringify(summary, null, 2)}\n`);

const r1 = (/** @type {number} */ n) => n.toFixed(1);
console.log(`\nsuite: vitest ${r1(wallS)} s wall, ${files.length} files, exit ${code}`);
if (machine) {
  console.log(
    `machine: ${r1(machine.busyCpuSeconds)} CPU-s busy of ${r1(machine.coreSeconds)} core-s (${(machine.busyShare * 100).toFixed(0)}% busy); ` +
      `at full use of these cores the run could not take less than ${r1(machine.busyCpuSeconds / (machine.coreSeconds / wallS))} s`,
  );
  console.log('CPU-s by process kind (sampled, a floor):');
  for (const [kind, s] of Object.entries(byKind).sort((a, b) => b[1] - a[1])) console.log(`  ${r1(s).padStart(7)}  ${kind}`);
}
if (summary.cpuSecondsByCommand.length > 0) {
  console.log('CPU-s by command (processes), the heaviest:');
  for (const c of summary.cpuSecondsByCommand.slice(0, 12)) console.log(`  ${r1(c.cpuSeconds).padStart(7)}  ${c.command} (${c.processes})`);
}
console.log('slowest files (seconds, started at):');
for (const f of files.slice(0, 15)) console.log(`  ${r1(f.seconds).padStart(7)}  @${r1(f.startS).padStart(6)}  ${f.file}`);
process.exitCode = typeof code === 'number' ? code : 1;
