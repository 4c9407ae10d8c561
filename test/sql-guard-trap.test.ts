// What happens if the parser's WebAssembly instance ever traps (its fixed stack overflowing): the guard must
// fail closed for good rather than keep using an instance in an unknown state. The prescan's expression-depth
// bound is what keeps every accepted query away from this; here the parser is called directly to get there.
// (A file of its own: the trapped instance lives for the rest of this isolate.)
import { expect, it } from 'vitest';
import { checkSql } from '../src/sql/guard';
import { parseBigQuery } from '../src/sql/parser';

const ACME = { project: 'service-v1', dataset: 'acme' };

it('after a trap every later check throws instead of answering', async () => {
  expect(await checkSql('SELECT 1', ACME)).toMatchObject({ ok: true, tables: [] });

  const tooDeep = `SELECT ${Array(2000).fill('1').join(' + ')}`;
  expect(await checkSql(tooDeep, ACME)).toMatchObject({ ok: false, code: 'QUERY_FAILED', message: expect.stringContaining('too deep') });
  expect(() => parseBigQuery(tooDeep)).toThrow(WebAssembly.RuntimeError);

  expect(() => parseBigQuery('SELECT 1')).toThrow(/unavailable/);
  await expect(checkSql('SELECT * FROM `service-v1.globex.fact__orders`', ACME)).rejects.toThrow(/unavailable/);
  await expect(checkSql('SELECT 1', ACME)).rejects.toThrow(/unavailable/);
});
