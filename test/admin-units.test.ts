// The units of the administration pages (pure): byte limits are shown exactly and read back to the same bytes.
import { describe, expect, it } from 'vitest';
import { formatByteLimit, formatBytes, GIB, MIB, parseByteQuantity, TIB } from '../src/features/keys/units';

describe('byte limits round-trip', () => {
  it.each([
    [1, '1 byte'],
    [1000, '1,000 bytes'],
    [512, '0.5 KiB'],
    [20_000_000, '20,000,000 bytes'],
    [3 * MIB, '3 MiB'],
    [GIB / 2, '0.5 GiB'],
    [GIB / 4, '0.25 GiB'],
    [GIB / 8, '0.125 GiB'],
    [100 * GIB, '100 GiB'],
    [1023 * GIB, '1,023 GiB'],
    [1024 * GIB, '1 TiB'],
    [1.5 * TIB, '1.5 TiB'],
    [1024 * TIB, '1,024 TiB'],
    [Math.round(0.001 * GIB), '1,073,742 bytes'],
  ])('%d bytes shows as %s and reads back', (bytes, shown) => {
    expect(formatByteLimit(bytes)).toBe(shown);
    expect(parseByteQuantity(shown)).toEqual({ ok: true, bytes });
  });

  it('reads back every value it shows, for a spread of byte counts', () => {
    const samples = [1, 7, 1023, 1025, 65_536, 999_999, 10 ** 9, 2 ** 33 + 1, 5 * TIB + 3, 2 ** 50];
    for (let i = 1; i < 200; i++) samples.push(Math.floor((i * 7919) ** 2.7) % 2 ** 50 || 1);
    for (const bytes of samples) {
      const shown = formatByteLimit(bytes);
      expect(parseByteQuantity(shown), shown).toEqual({ ok: true, bytes });
      // Never the long binary fractions (0.018626451492309… GiB): at most three decimals.
      expect(shown).toMatch(/^[\d,]+(\.\d{1,3})? (bytes?|KiB|MiB|GiB|TiB)$/);
    }
  });

  it('reads a bare number as GiB, units in any case, and thousands separators only where they group thousands', () => {
    expect(parseByteQuantity('2')).toEqual({ ok: true, bytes: 2 * GIB });
    expect(parseByteQuantity(' 1.5  TIB ')).toEqual({ ok: true, bytes: 1.5 * TIB });
    expect(parseByteQuantity('1,024 MiB')).toEqual({ ok: true, bytes: GIB });
    expect(parseByteQuantity('1,5')).toMatchObject({ ok: false });
    expect(parseByteQuantity('12,34 GiB')).toMatchObject({ ok: false });
    expect(parseByteQuantity('1e3')).toMatchObject({ ok: false });
    expect(parseByteQuantity('2 PB')).toEqual({ ok: false, message: 'unknown unit “PB”; use bytes, KiB, MiB, GiB or TiB' });
  });

  it('rounds usage for reading', () => {
    expect(formatBytes(1.5 * GIB)).toBe('1.5 GiB');
    expect(formatBytes(312)).toBe('312 bytes');
    expect(formatBytes(20_000_000)).toBe('19.07 MiB');
  });
});
