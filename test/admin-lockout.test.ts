// Sign-in lockout under concurrency: attempts are counted before the password is checked, so a burst of wrong
// passwords cannot be checked more times than the limit allows, per account and source and per IP address; and a
// lock taken from one source does not stop the account's owner elsewhere.
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../src/auth/passwords';
import { sha256Hex } from '../src/lib/ids';
import { requestSource } from '../src/http/source';
import { FAILURES_BEFORE_LOCK, IP_FAILURE_LIMIT, IP_WINDOW_MS, ipWindowStart } from '../src/web/sign-in';
import { addUser, inputValue, TestBrowser } from './oauth-client';
import { seedDemo } from './seed';

const USER = { id: 'user_lockout', email: 'lockout@demo.test', password: 'lockout-right-password' };

beforeAll(async () => {
  await seedDemo();
  await addUser(USER.id, USER.email, USER.password);
  await env.DB.prepare("INSERT INTO memberships (user_id, brand_id, role, created_at) VALUES (?, 'brand_acme', 'admin', ?)")
    .bind(USER.id, Date.now())
    .run();
});

/** A sign-in from its own browser (its own login nonce) at `ip`. */
async function attempt(ip: string, password: string): Promise<{ status: number; text: string }> {
  const browser = new TestBrowser(ip);
  const csrf = inputValue(await (await browser.get('/admin/login')).text(), 'csrf');
  const res = await browser.post('/admin/login', { csrf, email: USER.email, password });
  return { status: res.status, text: await res.text() };
}

/** The lockout row of USER from `ip`'s source. */
async function accountRow(ip: string) {
  return env.DB.prepare('SELECT failures, locked_until FROM login_account_failures WHERE user_id = ? AND source_hash = ?')
    .bind(USER.id, await sha256Hex(requestSource(ip)))
    .first<{ failures: number; locked_until: number | null }>();
}

const ATTACKER = '203.0.113.100';
const REAL_ADMIN = '192.0.2.10';

describe('sign-in lockout, per account and source', () => {
  it('checks at most 5 of 20 concurrent wrong passwords from one source, then refuses the right one from there', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => attempt(ATTACKER, `wrong-password-${i}`)));
    const wrong = results.filter((r) => r.status === 401);
    const locked = results.filter((r) => r.status === 429);
    expect(wrong.length + locked.length).toBe(20);
    for (const r of wrong) expect(r.text).toContain('Wrong email or password.');
    for (const r of locked) expect(r.text).toContain('Too many failed sign-ins for this account from your network');
    // Every checked password counted one failure; the attempt that reached the limit answered "locked".
    expect(wrong.length).toBeLessThanOrEqual(FAILURES_BEFORE_LOCK - 1);
    const row = await accountRow(ATTACKER);
    expect(row?.failures).toBe(FAILURES_BEFORE_LOCK);
    expect(row?.locked_until).toBeGreaterThan(Date.now());

    const right = await attempt(ATTACKER, USER.password);
    expect(right.status).toBe(429);
    // Still 5: a locked source's attempts are refused without a check and without counting.
    expect((await accountRow(ATTACKER))?.failures).toBe(FAILURES_BEFORE_LOCK);
  }, 60_000);

  it('a lockout from another source does not lock the account for the real source', async () => {
    // The attacker's source is locked out of the account (the test above, or here when run alone).
    for (let i = 0; (await accountRow(ATTACKER))?.locked_until == null && i < FAILURES_BEFORE_LOCK; i++) await attempt(ATTACKER, 'wrong');
    expect((await accountRow(ATTACKER))?.locked_until).toBeGreaterThan(Date.now());
    expect((await attempt(ATTACKER, USER.password)).status).toBe(429);
    // The real administrator, elsewhere, signs in with the right password: no lock of theirs, nothing counted.
    expect((await attempt(REAL_ADMIN, USER.password)).status).toBe(303);
    expect(await accountRow(REAL_ADMIN)).toBeNull();
    // Their own typos count for their own source only, and a right password clears them.
    expect((await attempt(REAL_ADMIN, 'typo')).status).toBe(401);
    expect((await accountRow(REAL_ADMIN))?.failures).toBe(1);
    expect((await attempt(REAL_ADMIN, USER.password)).status).toBe(303);
    expect(await accountRow(REAL_ADMIN)).toBeNull();
    // The attacker stays locked out.
    expect((await attempt(ATTACKER, USER.password)).status).toBe(429);
  }, 60_000);

  it('an IPv6 source is its /64: another address of the same network shares the lock', async () => {
    expect(requestSource('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(requestSource('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(requestSource('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(requestSource('::1')).toBe('0:0:0:0::/64');
    expect(requestSource('198.51.100.7')).toBe('198.51.100.7');
    for (let i = 0; i < FAILURES_BEFORE_LOCK; i++) await attempt(`2001:db8:1:2::${i + 1}`, 'wrong');
    expect((await attempt('2001:db8:1:2:ffff::9', USER.password)).status).toBe(429);
    expect((await attempt('2001:db8:1:3::1', USER.password)).status).toBe(303);
  }, 60_000);
});

/** Accounts sprayed from one address: more than the per-IP limit, each guessed once. */
const SPRAYED = Array.from({ length: IP_FAILURE_LIMIT + 10 }, (_, i) => ({ id: `user_spray_${i}`, email: `spray-${i}@demo.test` }));
const SPRAY_PASSWORD = 'spray-right-password';

async function addSprayedAccounts(): Promise<void> {
  // One PBKDF2 hash for all: the accounts differ by email, which is all the throttle sees.
  const h = await hashPassword(SPRAY_PASSWORD);
  await env.DB.batch(
    SPRAYED.map((u) =>
      env.DB.prepare(
        'INSERT INTO users (id, email, name, password_hash, password_salt, password_iterations, created_at) VALUES (?, ?, NULL, ?, ?, ?, ?)',
      ).bind(u.id, u.email, h.hash, h.salt, h.iterations, Date.now()),
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
    const rows = await env.DB.prepare("SELECT failures FROM login_account_failures WHERE user_id LIKE 'user_spray_%'").all<{
      failures: number;
    }>();
    expect(rows.results.reduce((n, r) => n + r.failures, 0)).toBe(IP_FAILURE_LIMIT);
    expect(rows.results.every((r) => r.failures <= 1)).toBe(true);
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
    expect((await right.browser.post('/admin/login', { csrf: right.csrf, email: sprayed.email, password: SPRAY_PASSWORD })).status).toBe(
      303,
    );
    expect(await ipCount(ip)).toBe(IP_FAILURE_LIMIT - 1);
    // USER is locked out from this address: refused without a check, nothing counted.
    await env.DB.prepare(
      'INSERT INTO login_account_failures (user_id, source_hash, failures, locked_until, updated_at) VALUES (?, ?, ?, ?, ?)',
    )
      .bind(USER.id, await sha256Hex(ip), FAILURES_BEFORE_LOCK, Date.now() + 60_000, Date.now())
      .run();
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
