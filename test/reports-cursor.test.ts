import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApiError } from '../src/errors';
import { CURSOR_TTL_MS, openCursor, signCursor, type CursorBinding } from '../src/http/cursor';

/** The cursor core on its own: pure apart from WebCrypto, so time is an argument. */
const SECRET = 'unit-test-cursor-secret-0123456789abcdef';
const NOW = Date.UTC(2026, 10, 21, 12);
const BINDING: CursorBinding = { principal: 'key:key_a', filters: { brandId: null, type: 'org' } };
const Position = z.tuple([z.string(), z.number().int(), z.string()]);

async function rejection(p: Promise<unknown>) {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  if (!(err instanceof ApiError)) throw new Error('unreachable');
  expect(err.code).toBe('VALIDATION');
  expect(err.status).toBe(400);
  expect(err.message).toMatch(/cursor/);
  expect(err.details).toEqual({ in: 'query', issues: [{ path: 'cursor', message: expect.any(String) }] });
  return err;
}

describe('signed cursors', () => {
  it('round-trips a position for the same binding; the token is opaque base64url', async () => {
    const token = await signCursor(SECRET, BINDING, ['brand_acme', 1, 'rpt_x'], NOW);
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(await openCursor(SECRET, token, BINDING, NOW + 1000, Position)).toEqual(['brand_acme', 1, 'rpt_x']);
  });

  it('does not depend on the order filters are listed in', async () => {
    const token = await signCursor(SECRET, BINDING, ['b', 0, 'r'], NOW);
    const reordered: CursorBinding = { principal: 'key:key_a', filters: { type: 'org', brandId: null } };
    expect(await openCursor(SECRET, token, reordered, NOW, Position)).toEqual(['b', 0, 'r']);
  });

  it.each([
    ['another principal', { principal: 'key:key_b', filters: BINDING.filters }],
    ['another filter value', { principal: 'key:key_a', filters: { brandId: null, type: 'brand' } }],
    ['a filter set instead of absent', { principal: 'key:key_a', filters: { brandId: 'brand_acme', type: 'org' } }],
    ['an extra filter', { principal: 'key:key_a', filters: { ...BINDING.filters, list: 'x' } }],
    ['an oauth principal with the same id', { principal: 'oauth:key_a', filters: BINDING.filters }],
  ])('is refused for %s', async (_name, binding) => {
    const token = await signCursor(SECRET, BINDING, ['b', 0, 'r'], NOW);
    await rejection(openCursor(SECRET, token, binding, NOW, Position));
  });

  it('accepts only the canonical spelling of a token (no second spelling through the unused low bits)', async () => {
    const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const token = await signCursor(SECRET, BINDING, ['b', 0, 'r'], NOW);
    // The MAC is 32 bytes in 43 characters: the last character carries 4 bits, its 2 low bits are unused.
    const last = ALPHABET.indexOf(token.slice(-1));
    const sameBits = token.slice(0, -1) + ALPHABET[last ^ 1];
    await rejection(openCursor(SECRET, sameBits, BINDING, NOW, Position));
    expect(await openCursor(SECRET, token, BINDING, NOW, Position)).toEqual(['b', 0, 'r']);
  });

  it('is refused under another secret (forged)', async () => {
    const token = await signCursor('some-other-secret', BINDING, ['b', 0, 'r'], NOW);
    await rejection(openCursor(SECRET, token, BINDING, NOW, Position));
  });

  it('is refused once older than the TTL, and when issued in the future', async () => {
    const token = await signCursor(SECRET, BINDING, ['b', 0, 'r'], NOW);
    expect(await openCursor(SECRET, token, BINDING, NOW + CURSOR_TTL_MS, Position)).toEqual(['b', 0, 'r']);
    const err = await rejection(openCursor(SECRET, token, BINDING, NOW + CURSOR_TTL_MS + 1, Position));
    expect(err.message).toMatch(/expired/);
    await rejection(openCursor(SECRET, token, BINDING, NOW - 10 * 60 * 1000, Position));
  });

  it('is refused when a validly signed payload is not a position of the expected shape', async () => {
    const token = await signCursor(SECRET, BINDING, { offset: 10 }, NOW);
    await rejection(openCursor(SECRET, token, BINDING, NOW, Position));
  });

  it.each(['', '.', 'abc', 'a.b.c', '!!!.###', `${'a'.repeat(2000)}.b`])('is refused when malformed: %j', async (token) => {
    await rejection(openCursor(SECRET, token, BINDING, NOW, Position));
  });
});
