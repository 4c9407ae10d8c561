// The browser finder's rules, with a fake file system: no real browser needs to be present or absent; and the launch
// flags' feature list against playwright-core's.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { browserForTests, CHROMIUM_FLAGS, findBrowser, installHint, MACOS_APPS, PLAYWRIGHT_DISABLED_FEATURES } from './browser.mjs';

const only =
  (...paths) =>
  (p) =>
    paths.includes(p);

describe('findBrowser', () => {
  it('takes CHROMIUM_PATH first', () => {
    const env = { CHROMIUM_PATH: '/opt/chrome/chrome', PATH: '/usr/bin' };
    expect(findBrowser({ env, platform: 'linux', isExecutable: only('/opt/chrome/chrome', '/usr/bin/chromium') })).toEqual({
      path: '/opt/chrome/chrome',
      source: 'CHROMIUM_PATH',
    });
  });

  it('refuses a CHROMIUM_PATH that does not exist rather than silently using another browser', () => {
    expect(() =>
      findBrowser({ env: { CHROMIUM_PATH: '/nope', PATH: '/usr/bin' }, platform: 'linux', isExecutable: only('/usr/bin/chromium') }),
    ).toThrow('CHROMIUM_PATH=/nope is not an executable file');
  });

  it.each([
    ['chromium', '/usr/bin/chromium'],
    ['chromium-browser', '/snap/bin/chromium-browser'],
    ['google-chrome', '/usr/local/bin/google-chrome'],
  ])('finds %s on PATH', (_name, path) => {
    const env = { PATH: '/usr/local/bin:/usr/bin:/snap/bin' };
    expect(findBrowser({ env, platform: 'linux', isExecutable: only(path) })).toMatchObject({ path });
  });

  it('prefers chromium-headless-shell over chromium, wherever each is on PATH', () => {
    const env = { PATH: '/a:/b' };
    const both = only('/a/chromium', '/b/chromium-headless-shell');
    expect(findBrowser({ env, platform: 'linux', isExecutable: both })).toEqual({
      path: '/b/chromium-headless-shell',
      source: 'PATH (chromium-headless-shell)',
    });
  });

  it('names the Debian package of the headless shell on Linux', () => {
    expect(installHint('linux')).toContain('apt-get install -y chromium-headless-shell');
  });

  it('prefers chromium over google-chrome, in PATH order within a name', () => {
    const env = { PATH: '/a:/b' };
    expect(findBrowser({ env, platform: 'linux', isExecutable: only('/a/google-chrome', '/b/chromium') })?.path).toBe('/b/chromium');
    expect(findBrowser({ env, platform: 'linux', isExecutable: only('/a/chromium', '/b/chromium') })?.path).toBe('/a/chromium');
  });

  it('finds Chrome in /Applications on macOS only', () => {
    const mac = MACOS_APPS[0];
    expect(findBrowser({ env: { PATH: '/usr/bin' }, platform: 'darwin', isExecutable: only(mac) })).toEqual({
      path: mac,
      source: 'Applications',
    });
    expect(findBrowser({ env: { PATH: '/usr/bin' }, platform: 'linux', isExecutable: only(mac) })).toBeNull();
  });

  it('finds nothing on an empty machine', () => {
    expect(findBrowser({ env: { PATH: '/usr/bin:/bin' }, platform: 'linux', isExecutable: () => false })).toBeNull();
    expect(findBrowser({ env: {}, platform: 'linux', isExecutable: () => false })).toBeNull();
  });
});

describe('browserForTests', () => {
  const none = { platform: 'linux', isExecutable: () => false };

  it('skips with one loud line naming the install command when there is no browser', () => {
    const lines = [];
    expect(browserForTests({ ...none, env: { PATH: '/usr/bin' }, warn: (l) => lines.push(l) })).toBeNull();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('BROWSER TESTS SKIPPED');
    expect(lines[0]).toContain('apt-get install -y chromium');
    expect(lines[0].trim().split('\n')).toHaveLength(1);
  });

  it('fails instead under REQUIRE_BROWSER=1 (CI)', () => {
    const lines = [];
    expect(() => browserForTests({ ...none, env: { PATH: '/usr/bin', REQUIRE_BROWSER: '1' }, warn: (l) => lines.push(l) })).toThrow(
      /REQUIRE_BROWSER=1 but no Chromium or Chrome was found; install one: sudo apt-get install -y chromium/,
    );
    expect(lines).toEqual([]);
  });

  it('returns the browser without a word when there is one', () => {
    const lines = [];
    expect(
      browserForTests({
        env: { PATH: '/usr/bin' },
        platform: 'linux',
        isExecutable: only('/usr/bin/chromium'),
        warn: (l) => lines.push(l),
      }),
    ).toMatchObject({
      path: '/usr/bin/chromium',
    });
    expect(lines).toEqual([]);
  });

  it('names the macOS install command on macOS', () => {
    expect(installHint('darwin')).toContain('brew install --cask chromium');
  });
});

describe('CHROMIUM_FLAGS', () => {
  // Chromium reads only the last --disable-features; ours comes after playwright-core's and must not drop any of them.
  it('turns off every feature playwright-core turns off, in its one --disable-features', () => {
    const bundle = readFileSync(createRequire(import.meta.url).resolve('playwright-core/lib/coreBundle'), 'utf8');
    const list = /disabledFeatures = \[([^\]]*)\]/.exec(bundle)?.[1];
    expect(list, "playwright-core's disabledFeatures list was not found in its bundle").toBeDefined();
    const theirs = [...(list ?? '').matchAll(/^\s*"([^"]+)"/gm)].map((m) => m[1]);
    expect(theirs.length).toBeGreaterThan(5);
    expect(PLAYWRIGHT_DISABLED_FEATURES).toEqual(theirs);
    const flags = CHROMIUM_FLAGS.filter((f) => f.startsWith('--disable-features='));
    expect(flags).toHaveLength(1);
    expect(flags[0]?.slice('--disable-features='.length).split(',')).toEqual(expect.arrayContaining(theirs));
  });
});
