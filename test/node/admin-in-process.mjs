// The admin CLI's whole command layer (`runAdmin`) run in this process on an already open local D1, as
// `npm run admin -- ...args --persist-to <stateDir>` would run it: what it prints and its exit code.
import { runAdmin } from '../../scripts/admin.mjs';

/**
 * @param {import('../../scripts/lib/d1.mjs').D1Executor} db the open database the command must use
 * @param {string} stateDir its --persist-to directory
 * @param {string[]} args the command line after `npm run admin --`
 * @returns {Promise<{ code: number; stdout: string; stderr: string }>}
 */
export async function runAdminOn(db, stateDir, args) {
  let stdout = '';
  let stderr = '';
  const code = await runAdmin([...args, '--persist-to', stateDir], {
    // The shared open database; the CLI closes what it opened, so this one's close is a no-op.
    openD1: async (target) => {
      if (target.remote || target.persistTo !== stateDir) throw new Error(`the CLI opened ${JSON.stringify(target)}, not ${stateDir}`);
      return { execute: (s) => db.execute(s), close: async () => {} };
    },
    out: (text) => (stdout += `${text}\n`),
    err: (text) => (stderr += `${text}\n`),
    interactive: false,
  });
  return { code, stdout, stderr };
}
