import { generateKeyPairSync } from 'node:crypto';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    warehouseUrl: string;
    serviceAccountJson: string;
  }
}

/** Runs once in Node before any project: makes a throwaway service account and starts the local warehouse. */
export default async function setup(project: TestProject) {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const serviceAccount = {
    type: 'service_account',
    project_id: 'service-v1',
    private_key_id: 'test-key-1',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: 'query-api@service-v1.iam.gserviceaccount.com',
  };
  project.provide('serviceAccountJson', JSON.stringify(serviceAccount));
  project.provide('warehouseUrl', 'http://127.0.0.1:9');
}
