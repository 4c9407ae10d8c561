/**
 * How many bytes a run reserves from the daily byte budget when it is admitted: the most it can bill. Pure.
 *
 * BigQuery's on-demand billing rounds each table's bytes up to the next MB, with a minimum of 10 MB per table
 * referenced and 10 MB per query (https://cloud.google.com/bigquery/pricing#on_demand_pricing). A run over
 * `tables` tables whose dry run estimated `estimate` bytes therefore bills at most `estimate + tables * 11 MiB`
 * (10 MiB minimum plus 1 MiB of rounding per table; MiB is above Google's MB, so this errs towards reserving more).
 * The per-query ceiling (`maximumBytesBilled`, sent with the run) bounds it in any case: BigQuery refuses a run
 * that would bill more, without charge.
 */

const MIB = 1024 * 1024;
/** Per table referenced: the 10 MB billing minimum plus up to 1 MB of rounding. */
export const RESERVED_PER_TABLE = 11 * MIB;

export function runReservation(estimate: number, tables: number, maxBytesBilled: number): number {
  const bound = Math.max(0, Math.ceil(estimate)) + Math.max(1, tables) * RESERVED_PER_TABLE;
  return Math.min(bound, Math.max(0, maxBytesBilled));
}
