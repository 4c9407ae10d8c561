#!/usr/bin/env node
// Runs the local warehouse in the foreground:
//   node dev/warehouse/cli.mjs [--port N] [--host H] [--service-account-file F] [--today YYYY-MM-DD]
// The service-account file is read when it exists, otherwise a fresh account is written there, so the
// Worker (GCP_SERVICE_ACCOUNT_JSON) and the warehouse agree on the key. Prints the URL on stdout.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { createServiceAccount, serviceAccountFromJson } from './service-account.mjs';
import { startWarehouse } from './server.mjs';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
    'service-account-file': { type: 'string', default: '.dev/service-account.json' },
    today: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log('usage: node dev/warehouse/cli.mjs [--port N] [--host H] [--service-account-file F] [--today YYYY-MM-DD]');
  process.exit(0);
}
const file = values['service-account-file'];
let account;
if (existsSync(file)) {
  account = serviceAccountFromJson(readFileSync(file, 'utf8'));
} else {
  account = createServiceAccount();
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, account.json, { mode: 0o600 });
}
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be 0..65535, got ${values.port}`);
const wh = await startWarehouse({
  host: values.host,
  port,
  today: values.today,
  serviceAccounts: [{ clientEmail: account.clientEmail, publicKeyPem: account.publicKeyPem, keyId: account.keyId || undefined }],
});
console.log(wh.url);
console.error(
  `local warehouse: ${wh.url} (demo data for ${wh.today}, ${wh.startup.generated ? 'generated' : 'cached'}; ready in ${Math.round(wh.startup.totalMs)} ms; service account ${account.clientEmail} in ${file})`,
);
const stop = async () => {
  await wh.close();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
