// What the browser tests of the admin pages share: the seeded Worker and a headless chromium for the file, the two
// screen sizes, screenshots, the no-horizontal-scroll check and the sign-in form.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, expect, vi } from 'vitest';
import { ROOT } from '../../scripts/lib/import-ts.mjs';
import { CHROMIUM_FLAGS } from './browser.mjs';
import { reportRetry } from './retry-report.mjs';
import { startSeededWorker } from './seeded-worker.mjs';

export const DESKTOP = { width: 1280, height: 900 };
/** How long one navigation may take before it is sent once more (playwright's default is 30 s). */
const NAVIGATION_TIMEOUT_MS = 25_000;
/** A browser test's time limit: its own work and one navigation retry. */
const BROWSER_TEST_TIMEOUT_MS = 120_000;
export const PHONE = { width: 390, height: 844 };
const ARTIFACTS = join(ROOT, 'test-artifacts');

/**
 * The demo seed's key secrets and admin logins for one file, made from `tag` (shaped like real secrets: prefix + 43
 * characters).
 * @param {string} tag
 */
export function seedSecrets(tag) {
  const keySecret = (/** @type {string} */ role) => `wqk_${`${tag}${role}`.padEnd(43, '0')}`;
  return {
    keys: { org: keySecret('Org'), brand: keySecret('Brand'), other: keySecret('Other') },
    admins: {
      org: { email: `org-admin@${tag}.test`, password: `org-admin-${tag}-password` },
      brand: { email: `brand-admin@${tag}.test`, password: `brand-admin-${tag}-password` },
    },
  };
}

/**
 * For one test file: the Worker on a fresh demo seed with `secrets` and a headless chromium, started before its tests
 * and stopped after (nothing is started when `found`, what browserForTests found, is null: the tests are skipped).
 * @param {{ path: string } | null} found
 * @param {string} prefix the state directory's name prefix
 * @param {ReturnType<typeof seedSecrets>} secrets
 * @param {() => Promise<Record<string, string>>} [vars] extra bindings, made in beforeAll before the Worker starts
 * @param {string[]} [extraSql] statements run after the demo seed, before the Worker starts
 */
export function seededWorkerAndBrowser(found, prefix, secrets, vars, extraSql = []) {
  // Room for one navigation retry (goto below: 25 s, a probe of up to 10 s, 25 s again) on top of the test's own
  // work; vitest puts the file's configuration back after the file.
  vi.setConfig({ testTimeout: BROWSER_TEST_TIMEOUT_MS });
  /** @type {{ baseUrl: string, browser: import('playwright-core').Browser | undefined, stop?: () => Promise<void> }} */
  const state = { baseUrl: '', browser: undefined };
  beforeAll(async () => {
    if (!found) return;
    await mkdir(ARTIFACTS, { recursive: true });
    const worker = await startSeededWorker({ prefix, ...secrets, vars: vars ? await vars() : {}, extraSql });
    state.baseUrl = worker.baseUrl;
    state.stop = worker.stop;
    state.browser = await chromium.launch({ executablePath: found.path, args: CHROMIUM_FLAGS, headless: true });
  }, 180_000);
  afterAll(async () => {
    await state.browser?.close();
    await state.stop?.();
  });
  return state;
}

/** A full-page screenshot to test-artifacts/<name>.png. */
export function shot(page, name) {
  return page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** No horizontal scrolling: the layout fits the viewport (phone and desktop). */
export async function expectFitsViewport(page) {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
  }));
  expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
}

/** Fills and sends the sign-in form the page shows (the admin pages' or /authorize's). */
export async function submitSignIn(page, admin) {
  await page.getByLabel('Email').fill(admin.email);
  await page.getByLabel('Password').fill(admin.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/**
 * page.goto on the seeded Worker, tried once more when it did not finish in time. In runs of the browser files side by
 * side on a loaded 2-core machine a navigation sometimes never started: after 25 s the page was still at about:blank
 * (or at the page before) while a plain Node request to the same address was answered at once (38 to 120 ms; seen in
 * CI and here, about one run in five of the five browser files together, never in a file run alone; wrangler's log
 * showed no restart or error). Sent again, it went through two times of three. Each retry is reported on stderr and
 * in test-artifacts/navigation-retries.log with what the Node request got at that moment, so a retry never passes
 * silently; a Worker that stopped answering shows in the probe and fails the second try.
 * @param {import('playwright-core').Page} page
 * @param {string} url
 */
export async function goto(page, url) {
  try {
    return await page.goto(url, { timeout: NAVIGATION_TIMEOUT_MS });
  } catch (err) {
    if (!(err instanceof Error) || err.name !== 'TimeoutError') throw err;
    const started = Date.now();
    const probe = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(10_000) }).then(
      (res) => `answered ${res.status} in ${Date.now() - started} ms`,
      (e) => `failed after ${Date.now() - started} ms: ${e instanceof Error ? e.message : String(e)}`,
    );
    const what = `navigation to ${url} not loaded after ${NAVIGATION_TIMEOUT_MS} ms (page at ${page.url()})`;
    const line = `${new Date().toISOString()} ${what}; a Node request ${probe}; trying once more\n`;
    await reportRetry('browser', join(ARTIFACTS, 'navigation-retries.log'), line);
    return page.goto(url, { timeout: NAVIGATION_TIMEOUT_MS });
  }
}
