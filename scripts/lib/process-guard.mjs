#!/usr/bin/env node
// Runs a command so that it cannot outlive whoever started it:
//   node scripts/lib/process-guard.mjs <command> [args...]
// The command runs in its own process group. The group (the command and everything it spawned, e.g. wrangler
// and its workerd) is stopped when this guard gets SIGTERM/SIGINT/SIGHUP, or when its stdin reaches EOF, which
// happens when the parent dies for any reason, SIGKILL included. Its exit code is the command's.
import { spawn } from 'node:child_process';

const GRACE_MS = 5_000;
const [cmd, ...args] = process.argv.slice(2);
if (!cmd) {
  console.error('usage: process-guard.mjs <command> [args...]');
  process.exit(2);
}

const child = spawn(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], detached: true });
let stopping = false;

function signalGroup(signal) {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {
    // the group is already gone
  }
}

function stop() {
  if (stopping) return;
  stopping = true;
  signalGroup('SIGTERM');
  setTimeout(() => signalGroup('SIGKILL'), GRACE_MS).unref();
}

child.on('error', (err) => {
  console.error(`process-guard: cannot start ${cmd}: ${err.message}`);
  process.exit(127);
});
child.on('exit', (code, signal) => {
  // Whatever the command left behind in its group goes with it.
  signalGroup('SIGKILL');
  process.exit(code ?? (signal ? 128 : 1));
});
for (const s of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(s, stop);
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();
