import type { Hono } from 'hono';
import type { FC } from 'hono/jsx';
import type { AppEnv } from '../../app-env';
import type { AdminReach } from '../../auth/oauth-principal';
import type { Env } from '../../env';
import { adminGet } from '../../web/guards';
import { SEARCH_PAGE } from '../search/search';
import { AdminPage, Time } from '../../web/layout';
import { renderPage } from '../../web/render';
import { type CatalogVersion, versionFromRow } from './versions';

/**
 * /admin/catalog, read-only: which catalog version is live for the administrator's organizations (the newest
 * version that changed their catalog: content hash, who applied it, when, from where, what changed for them) and the
 * ones before it. Versions are kept per organization (`catalog_version_orgs`, versions.ts): another organization's
 * folders and changes are never shown. Catalogs are changed with `npm run admin -- catalog apply`
 * (docs/catalog.md), never here.
 */

const HISTORY = 10;

/** The organizations whose catalog an administrator sees: those they administer, and those of the brands they do. */
function catalogOrgs(reach: AdminReach): string[] {
  return [...new Set([...reach.orgIds, ...reach.brands.map((b) => b.orgId)])].sort();
}

async function readVersions(env: Env, orgIds: string[]): Promise<CatalogVersion[]> {
  // One line per version; an administrator of several organizations reads each one's part, named.
  const { results } = await env.DB.prepare(
    `SELECT v.id, v.content_hash, v.applied_by, v.applied_at, v.source,
            group_concat(CASE WHEN ?2 > 1 THEN o.org_id || ': ' || o.summary ELSE o.summary END, '; ') AS summary
       FROM catalog_versions v JOIN catalog_version_orgs o ON o.version_id = v.id
      WHERE o.org_id IN (SELECT value FROM json_each(?1))
      GROUP BY v.id ORDER BY v.applied_at DESC, v.rowid DESC LIMIT ${HISTORY}`,
  )
    .bind(JSON.stringify(orgIds), orgIds.length)
    .all<Record<string, unknown>>();
  return results.map((r) => versionFromRow(r)).filter((v): v is CatalogVersion => v !== null);
}

const VersionRow: FC<{ v: CatalogVersion; live: boolean }> = ({ v, live }) => (
  <tr>
    <td data-label="Version">
      <code title={v.contentHash}>{v.contentHash.slice(0, 12)}</code>
      {live ? <strong> (live)</strong> : null}
    </td>
    <td data-label="Applied by">{v.appliedBy}</td>
    <td data-label="When">
      <Time ms={v.appliedAt} />
    </td>
    <td data-label="From">{v.source ?? '-'}</td>
    <td data-label="Changes">{v.summary}</td>
  </tr>
);

const CatalogPage: FC<{ nonce: string; email: string; csrf: string; versions: CatalogVersion[] }> = ({ nonce, email, csrf, versions }) => {
  const [live] = versions;
  return (
    <AdminPage title="Catalog" nonce={nonce} current="catalog" email={email} csrf={csrf}>
      <section class="card" aria-labelledby="live-version">
        <h2 id="live-version">Live catalog version</h2>
        {live ? (
          <p>
            <code title={live.contentHash}>{live.contentHash.slice(0, 12)}</code>, applied by {live.appliedBy} on{' '}
            <Time ms={live.appliedAt} />
            {live.source ? <> from {live.source}</> : null} ({live.summary}).
          </p>
        ) : (
          <p>No catalog version has changed your organization's catalog yet.</p>
        )}
        <p class="muted">
          Reports, saved queries and memories are applied from a catalog folder with <code>npm run admin -- catalog apply DIR</code>; this
          page only shows what is live.
        </p>
        <p>
          <a href={SEARCH_PAGE}>Search the catalog</a> as a connected assistant sees it: reports, tables with their columns, saved queries
          and memories of the brands you administer.
        </p>
      </section>
      {versions.length > 0 ? (
        <section class="card" aria-labelledby="history">
          <h2 id="history">Recent versions</h2>
          <table>
            <thead>
              <tr>
                <th>Version</th>
                <th>Applied by</th>
                <th>When</th>
                <th>From</th>
                <th>Changes</th>
              </tr>
            </thead>
            <tbody>
              {versions.map((v, i) => (
                <VersionRow v={v} live={i === 0} />
              ))}
            </tbody>
          </table>
        </section>
      ) : null}
    </AdminPage>
  );
};

export function catalogRoutes(admin: Hono<AppEnv>): void {
  adminGet(admin, '/catalog', async (c, signedIn) => {
    const versions = await readVersions(c.env, catalogOrgs(signedIn.user.reach));
    return renderPage(c, 200, (nonce) => (
      <CatalogPage nonce={nonce} email={signedIn.user.reach.email} csrf={signedIn.csrf} versions={versions} />
    ));
  });
}
