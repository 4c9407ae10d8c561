import { SELF } from 'cloudflare:test';
import { it } from 'vitest';
it('dump', async () => {
  const res = await SELF.fetch('http://api.test/v1/data/openapi.json');
  const doc: any = await res.json();
  console.log('DUMP' + JSON.stringify({ params: doc.paths['/v1/data/reports'].get.parameters, rq: doc.components.schemas.RunQueryRequest, sq: doc.components.schemas.StoredQuery, p: doc.components.schemas.Period, fb: doc.components.schemas.FeedbackRequest.properties.brandId, err: doc.components.schemas.Error }, null, 1));
});
