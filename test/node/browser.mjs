// Finds a Chromium-family browser for the browser tests (playwright-core brings none of its own). Shared by every
// browser test file:
//
//   import { browserForTests, CHROMIUM_FLAGS } from './browser.mjs';
//   const found = browserForTests();            // one loud line and null when there is none (throws under REQUIRE_BROWSER=1)
//   describe.skipIf(!found)('...', () => { ... chromium.launch({ executablePath: found.path, args: CHROMIUM_FLAGS }) ... });
//
// Order: $CHROMIUM_PATH (must exist when set), then `chromium-headless-shell`, `chromium`, `chromium-browser`,
// `google-chrome`, `google-chrome-stable` on $PATH, then Chrome or Chromium in /Applications on macOS. Without one
// the tests are skipped, unless REQUIRE_BROWSER=1 (set by .ci/run), which turns a missing browser into a failure.
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * Names looked for on PATH, first found wins. Debian's `chromium-headless-shell` comes first: the same Chromium
 * build as Debian's `chromium`, in the headless-only form Playwright itself runs headless tests on (no browser UI,
 * no window machinery). Over the six browser files together it took 87 CPU-s against `chromium`'s 137 (measured here,
 * `npm run bench:suite` with each as CHROMIUM_PATH), with the same 68 tests passing: a third less of Chromium's
 * CPU. Without it, the full browser is used as before.
 */
export const PATH_NAMES = ['chromium-headless-shell', 'chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];
export const MACOS_APPS = [
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
];

/**
 * The features playwright-core turns off at launch (its chromiumSwitches), restated for CHROMIUM_FLAGS below;
 * browser-finder.test.mjs holds this copy to playwright-core's own list.
 */
export const PLAYWRIGHT_DISABLED_FEATURES = [
  'AvoidUnnecessaryBeforeUnloadCheckSync',
  'DestroyProfileOnBrowserClose',
  'HttpsUpgrades',
  'HttpsFirstBalancedModeAutoEnable',
  'LensOverlay',
  'MediaRouter',
  'PaintHolding',
  'ThirdPartyStoragePartitioning',
  'AvoidCorsURLLoaderRestartOnRedirect',
  'TcpPortRandomizationWin',
  'OptimizationHints',
  'NetworkTimeServiceQuerying',
  'AimEnabled',
  'PreconnectToSearch',
  'msForceBrowserSignIn',
  'msEdgeUpdateLaunchServicesPreferredVersion',
];

/**
 * Chromium's omnibox popups, which Chromium 156 builds for every window, headless too: two WebUI pages
 * (chrome://omnibox-popup.top-chrome/) in a renderer each, for each browser context a test opens. Turning them off
 * took a quarter of the Chromium CPU of test/node/browser-layout.test.mjs (25.6 -> 18.3 CPU-s, measured here).
 */
const UNUSED_FEATURES = ['WebUIOmniboxPopup', 'WebUIOmniboxAimPopup'];

/**
 * Flags for headless runs in containers and CI (no sandbox: CI runs as root; no network chatter). Chromium reads
 * only the last --disable-features, and playwright-core puts its own before ours, so ours carries its list too.
 */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  `--disable-features=${[...PLAYWRIGHT_DISABLED_FEATURES, ...UNUSED_FEATURES].join(',')}`,
];

function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The browser to drive, or null. Pure apart from `isExecutable`, which tests replace.
 * @param {{ env?: Record<string, string | undefined>, platform?: string, isExecutable?: (path: string) => boolean }} [opts]
 * @returns {{ path: string, source: string } | null}
 */
export function findBrowser({ env = process.env, platform = process.platform, isExecutable: canRun = isExecutable } = {}) {
  if (env.CHROMIUM_PATH) {
    if (!canRun(env.CHROMIUM_PATH)) throw new Error(`CHROMIUM_PATH=${env.CHROMIUM_PATH} is not an executable file`);
    return { path: env.CHROMIUM_PATH, source: 'CHROMIUM_PATH' };
  }
  const dirs = (env.PATH ?? '').split(delimiter).filter(Boolean);
  for (const name of PATH_NAMES) {
    for (const dir of dirs) {
      const path = join(dir, name);
      if (canRun(path)) return { path, source: `PATH (${name})` };
    }
  }
  if (platform === 'darwin') {
    for (const path of MACOS_APPS) if (canRun(path)) return { path, source: 'Applications' };
  }
  return null;
}

/**
 * The command that installs a browser here.
 * @param {string} [platform]
 */
export function installHint(platform = process.platform) {
  if (platform === 'darwin') return 'brew install --cask chromium (or install Google Chrome), or set CHROMIUM_PATH';
  return 'sudo apt-get install -y chromium-headless-shell (Debian; or chromium), or set CHROMIUM_PATH';
}

/**
 * For a browser test file: the browser, or null after ONE loud line saying the tests are skipped and how to install
 * one. With REQUIRE_BROWSER=1 a missing browser throws instead, so CI cannot pass by skipping.
 * @param {{ env?: Record<string, string | undefined>, platform?: string, isExecutable?: (path: string) => boolean, warn?: (line: string) => void }} [opts]
 */
export function browserForTests({
  env = process.env,
  platform = process.platform,
  isExecutable: canRun = isExecutable,
  warn = console.warn,
} = {}) {
  const found = findBrowser({ env, platform, isExecutable: canRun });
  if (found) return found;
  const hint = installHint(platform);
  if (env.REQUIRE_BROWSER === '1') throw new Error(`REQUIRE_BROWSER=1 but no Chromium or Chrome was found; install one: ${hint}`);
  warn(`\n!!! BROWSER TESTS SKIPPED: no Chromium or Chrome found (CHROMIUM_PATH, ${PATH_NAMES.join(', ')}). Install one: ${hint} !!!\n`);
  return null;
}
