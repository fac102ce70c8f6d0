import type { Db } from '../../platform/database/index.js';

/**
 * The CSP `frame-ancestors` sources of an embedded booking page (/book/:id?embed=1): the company's
 * allowedDomains as https origins (and http, when PUBLIC_ALLOW_HTTP_ORIGINS is on, as the public
 * API accepts them then). An unknown client id, a suspended company or one with no domains: 'none'.
 * One indexed read of the company by its public client id (unique), two columns.
 */
export function createFrameAncestors(db: Db, allowHttp: boolean) {
  return async function frameAncestors(publicClientId: string): Promise<string> {
    const company = await db
      .selectFrom('companies')
      .select(['allowedDomains', 'suspendedAt'])
      .where('publicClientId', '=', publicClientId)
      .executeTakeFirst();
    if (!company || company.suspendedAt || company.allowedDomains.length === 0) return "'none'";
    // allowedDomains are normalised hosts (host[:port], src/modules/companies/allowed-domains.ts),
    // so they are safe as CSP host sources: no spaces, semicolons or quotes.
    return company.allowedDomains.flatMap((host) => (allowHttp ? [`https://${host}`, `http://${host}`] : [`https://${host}`])).join(' ');
  };
}
