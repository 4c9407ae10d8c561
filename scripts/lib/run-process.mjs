// Running a child process to completion and keeping what it printed: the wrangler children of the D1 tooling and
// the tests that run a command line as a person would.
import { spawn } from 'node:child_process';

/**
 * Runs `cmd args` with no stdin and resolves with its exit code and its whole output. A non-zero exit is not an
 * error here (callers judge it and show the output); failing to start is.
 * @param {string} cmd
 * @param {string[]} args
 * @param {{ cwd?: string; env?: NodeJS.ProcessEnv }} [options] `env` defaults to this process's environment
 * @returns {Promise<{ code: number | null; stdout: string; stderr: string }>}
 */
export function runProcess(cmd, args, { cwd, env } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
