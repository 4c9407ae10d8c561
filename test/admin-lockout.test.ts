// Sign-in lockout under concurrency (issue 16 item 8): attempts are counted before the password is checked, so a
// burst of wrong passwords cannot be checked more times than the limit allows.
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { FAILURES_BEFORE_LOCK } from '../src/web/sign-in';
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
