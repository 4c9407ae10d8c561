// Sign-in lockout under concurrency (issue 16 item 8): attempts are counted before the password is checked, so a
// burst of wrong passwords cannot be checked more times than the limit allows, per account and per IP address.
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../src/auth/passwords';
import { sha256Hex } from '../src/lib/ids';
import { FAILURES_BEFORE_LOCK, IP_FAILURE_LIMIT, IP_WINDOW_MS, ipWindowStart } from '../src/web/sign-in';
import { addUser, inputValue, TestBrowser } from './oauth-client';
import { seedDemo } from './seed';

const USER = { id: 'user_lockout', email: 'lockout@demo.test', password: 'lockout-right-password' };

beforeAll(async () => {
  await seedDemo();
  await addUser(USER.id, USER.email, USER.password);
  await env.DB.prepare("INSERT INTO memberships (user_id, brand_id, role, created_at) VALUES (?, 'brand_acme', 'admin', ?)").bind(USER.id, Date.now()).run();
});

/** A sign-in from its own browser and IP address (the per-IP throttle stays out of the picture). */
async function attempt(i: number, password: string): Promise<{ status: number; text: string }> {
  const browser = new TestBrowser(`203.0.113.${100 + i}`);
  const csrf = inputValue(await (await browser.get('/admin/login')).text(), 'csrf');
  const res = await browser.post('/admin/login', { csrf, email: USER.email, password });
  return { status: res.status, text: await res.text() };
}

describe('sign-in lockout', () => {
  it('checks at most 5 of 30 concurrent wrong passwords, then refuses the right one while locked', async () => {
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => attempt(i, `wrong-password-${i}`)));
    const wrong = results.filter((r) => r.status === 401);
    const locked = results.filter((r) => r.status === 429);
    expect(wrong.length + locked.length).toBe(30);
    for (const r of wrong) expect(r.text).toContain('Wrong email or password.');
    for (const r of locked) expect(r.text).toContain('Too many failed sign-ins for this account');
    // Every checked password counted one failure; the attempt that reached the limit answered "locked".
    expect(wrong.length).toBeLessThanOrEqual(FAILURES_BEFORE_LOCK - 1);
    const row = await env.DB.prepare('SELECT failed_logins, locked_until FROM users WHERE id = ?').bind(USER.id).first<{ failed_logins: number; locked_until: number }>();
    expect(row?.failed_logins).toBe(FAILURES_BEFORE_LOCK);
    expect(row?.locked_until).toBeGreaterThan(Date.now());

    const right = await attempt(99, USER.password);
    expect(right.status).toBe(429);
    expect(right.text).toContain('Too many failed sign-ins for this account');
    // Still 5: a locked account's attempts are refused without a check and without counting.
    expect((await env.DB.prepare('SELECT failed_logins FROM users WHERE id = ?').bind(USER.id).first<{ failed_logins: number }>())?.failed_logins).toBe(
      FAILURES_BEFORE_LOCK,
    );
  });
});

/** Accounts sprayed from one address: more than the per-IP limit, each guessed once. */
const SPRAYED = Array.from({ length: IP_FAILURE_LIMIT + 10 }, (_, i) => ({ id: `user_spray_${i}`, email: `spray-${i}@demo.test` }));
const SPRAY_PASSWORD = 'spray-right-password';

async function addSprayedAccounts(): Promise<void> {
  // One PBKDF2 hash for all: the accounts differ by email, which is all the throttle sees.
  const h = await hashPassword(SPRAY_PASSWORD);
  await env.DB.batch(
    SPRAYED.map((u) =>
      env.DB.prepare('INSERT INTO users (id, email, name, password_hash, password_salt, password_iterations, created_at) VALUES (?, ?, NULL, ?, ?, ?, ?)').bind(
        u.id,
        u.email,
        h.hash,
        h.salt,
        h.iterations,
        Date.now(),
      ),
    ),
  );
}

/** A sign-in form opened from `ip` (its own login nonce cookie), ready to post. */
async function openForm(ip: string): Promise<{ browser: TestBrowser; csrf: string }> {
  const browser = new TestBrowser(ip);
  return { browser, csrf: inputValue(await (await browser.get('/admin/login')).text(), 'csrf') };
}

async function ipCount(ip: string): Promise<number | undefined> {
  const row = await env.DB.prepare('SELECT failures FROM login_ip_failures WHERE ip_hash = ? AND window_start = ?')
    .bind(await sha256Hex(ip), ipWindowStart(Date.now()))
    .first<{ failures: number }>();
  return row?.failures;
}

describe('per-IP sign-in throttle', () => {
  it(`checks exactly ${IP_FAILURE_LIMIT} of ${SPRAYED.length} concurrent wrong passwords from one IP against different accounts, refusing the rest with the wait`, async () => {
    await addSprayedAccounts();
    const ip = '198.51.100.60';
    const forms = await Promise.all(SPRAYED.map(() => openForm(ip)));
    const results = await Promise.all(
      SPRAYED.map(async (u, i) => {
        const form = forms[i];
        if (!form) throw new Error('no form');
        const res = await form.browser.post('/admin/login', { csrf: form.csrf, email: u.email, password: `wrong-${i}` });
        return { status: res.status, retryAfter: res.headers.get('retry-after'), text: await res.text() };
      }),
    );
    const checked = results.filter((r) => r.status === 401);
    const refused = results.filter((r) => r.status === 429);
    expect(checked.length).toBe(IP_FAILURE_LIMIT);
    expect(refused.length).toBe(SPRAYED.length - IP_FAILURE_LIMIT);
    for (const r of checked) expect(r.text).toContain('Wrong email or password.');
    for (const r of refused) {
      // The documented wait: until the 15-minute window ends, in Retry-After and in whole minutes on the page.
      const seconds = Number(r.retryAfter);
      expect(seconds).toBeGreaterThan(0);
      expect(seconds).toBeLessThanOrEqual(IP_WINDOW_MS / 1000);
      const minutes = Math.max(1, Math.ceil(seconds / 60));
      expect(r.text).toContain(`Too many failed sign-ins from your network. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`);
    }
    // The stored counts agree: exactly the limit of passwords were checked, one per account at most.
    const rows = await env.DB.prepare("SELECT failed_logins FROM users WHERE id LIKE 'user_spray_%'").all<{ failed_logins: number }>();
    expect(rows.results.reduce((n, r) => n + r.failed_logins, 0)).toBe(IP_FAILURE_LIMIT);
    expect(rows.results.every((r) => r.failed_logins <= 1)).toBe(true);
    expect(await ipCount(ip)).toBe(IP_FAILURE_LIMIT);

    // The right password is refused from that address too, without a check; another address signs in.
    const first = SPRAYED[0];
    if (!first) throw new Error('no accounts');
    const again = await openForm(ip);
    const blocked = await again.browser.post('/admin/login', { csrf: again.csrf, email: first.email, password: SPRAY_PASSWORD });
    expect(blocked.status).toBe(429);
    expect(await ipCount(ip)).toBe(IP_FAILURE_LIMIT);
    const other = await openForm('198.51.100.61');
    expect((await other.browser.post('/admin/login', { csrf: other.csrf, email: first.email, password: SPRAY_PASSWORD })).status).toBe(303);
  }, 60_000);

  it('counts only checked wrong passwords: a right one and a locked account give the slot back', async () => {
    const ip = '198.51.100.70';
    const sprayed = SPRAYED[1];
    if (!sprayed) throw new Error('no accounts');
    await env.DB.prepare('INSERT INTO login_ip_failures (ip_hash, window_start, failures) VALUES (?, ?, ?)')
      .bind(await sha256Hex(ip), ipWindowStart(Date.now()), IP_FAILURE_LIMIT - 1)
      .run();
    const right = await openForm(ip);
    expect((await right.browser.post('/admin/login', { csrf: right.csrf, email: sprayed.email, password: SPRAY_PASSWORD })).status).toBe(303);
    expect(await ipCount(ip)).toBe(IP_FAILURE_LIMIT - 1);
    // USER is locked by the test above (or, run alone, is locked here): refused without a check, nothing counted.
    await env.DB.prepare('UPDATE users SET locked_until = ? WHERE id = ?').bind(Date.now() + 60_000, USER.id).run();
    const locked = await openForm(ip);
    const lockedRes = await locked.browser.post('/admin/login', { csrf: locked.csrf, email: USER.email, password: 'whatever' });
    expect(lockedRes.status).toBe(429);
    expect(await lockedRes.text()).toContain('Too many failed sign-ins for this account');
    expect(await ipCount(ip)).toBe(IP_FAILURE_LIMIT - 1);
    // The last slot goes to one wrong password; the next attempt is refused by the address.
    const wrong = await openForm(ip);
    expect((await wrong.browser.post('/admin/login', { csrf: wrong.csrf, email: 'nobody@demo.test', password: 'guess' })).status).toBe(401);
    const refused = await openForm(ip);
    const refusedRes = await refused.browser.post('/admin/login', { csrf: refused.csrf, email: sprayed.email, password: SPRAY_PASSWORD });
    expect(refusedRes.status).toBe(429);
    expect(await refusedRes.text()).toContain('Too many failed sign-ins from your network');
  });
});
