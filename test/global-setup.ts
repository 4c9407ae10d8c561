import { createServiceAccount } from '../dev/warehouse/service-account.mjs';
import { DEV_PROJECT } from '../dev/warehouse/demo-data.mjs';
import { startWarehouse } from '../dev/warehouse/server.mjs';
import { buildViews } from '../scripts/build-views.mjs';
import { startWebhookReceiver } from './node/webhook-receiver.mjs';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Base URL of the local warehouse (BIGQUERY_API_BASE); control endpoints at /__faults and /__requests. */
    warehouseUrl: string;
    /** The service account the Worker signs with; the warehouse trusts it for every dataset. */
    serviceAccountJson: string;
    /** GCP_SERVICE_ACCOUNTS_BY_BRAND for the demo brands: each account may read only its brand's dataset. */
    serviceAccountsByBrandJson: string;
    /** The demo data's "today" (YYYY-MM-DD, UTC) as the warehouse generated it. */
    warehouseToday: string;
    /** Base URL of the loopback webhook receiver (test/node/webhook-receiver.mjs); the Worker posts to `/hook`. */
    webhookUrl: string;
  }
}

const BRAND_DATASETS = { brand_acme: 'acme', brand_globex: 'globex', brand_umbrella: 'umbrella' } as const;

/** Runs once in Node before any project: makes throwaway service accounts and starts the local warehouse. */
export default async function setup(project: TestProject) {
  // The Worker reads the MCP Apps views from its assets directory (wrangler.toml [assets]): build them first.
  await buildViews({ quiet: true });
  const main = createServiceAccount();
  const perBrand = Object.entries(BRAND_DATASETS).map(([brandId, dataset]) => ({
    brandId,
    dataset,
    account: createServiceAccount({ clientEmail: `brand-${dataset}@${DEV_PROJECT}.iam.gserviceaccount.com` }),
  }));
  const warehouse = await startWarehouse({
    // The datasets live in a real-looking project, not the contract's `service-v1`: every run proves the mapping.
    project: DEV_PROJECT,
    serviceAccounts: [
      { clientEmail: main.clientEmail, publicKeyPem: main.publicKeyPem, keyId: main.keyId },
      ...perBrand.map(({ account, dataset }) => ({
        clientEmail: account.clientEmail,
        publicKeyPem: account.publicKeyPem,
        keyId: account.keyId,
        datasets: [dataset],
      })),
    ],
  });
  project.provide('warehouseUrl', warehouse.url);
  project.provide('serviceAccountJson', main.json);
  project.provide(
    'serviceAccountsByBrandJson',
    JSON.stringify(Object.fromEntries(perBrand.map(({ brandId, account }) => [brandId, JSON.parse(account.json) as unknown]))),
  );
  project.provide('warehouseToday', warehouse.today);
  const receiver = await startWebhookReceiver();
  project.provide('webhookUrl', receiver.url);
  return async () => {
    await receiver.close();
    await warehouse.close();
  };
}
