// How a test helper reports a retry it made (a navigation sent again, a POST the dev proxy dropped): a line on stderr
// and the same line appended to a log file, so a retry never passes silently and the run's retries can be read after.
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Writes `[tag] line` to stderr and appends `line` to `log` (its folder made when missing).
 * @param {string} tag @param {string} log @param {string} line one line, ending in a newline
 */
export async function reportRetry(tag, log, line) {
  process.stderr.write(`[${tag}] ${line}`);
  await mkdir(dirname(log), { recursive: true });
  await appendFile(log, line);
}
