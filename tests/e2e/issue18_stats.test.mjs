// issue18_stats.test.mjs — issue 18, "Stats", over HTTP: GET stats counts
// what the caller may see — a caller bound to a conversation (X-Zcor-
// Conversation) counts global memory and its own, never another
// conversation's — refuses a bad parameter naming it (400, details.field),
// and the page's call leaves no history record.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { request, withServe } from '../net.mjs';
import { mkTmp } from '../tmpdir.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');

function env() {
  const e = { ...process.env };
  delete e.ZCOR_DIR;
  delete e.ZCOR_TOKEN;
  return e;
}

const write = (srv, conv, title) => request(srv, '/api/v1/nodes', { method: 'POST', conv, body: { title, content: `${title}的内容` } });

test('issue18_stats_scope_and_refusals: a bound caller counts its own scope only; bad parameters are 400 naming them', async () => {
  await withServe(BIN, mkTmp('zcor-stats-'), env(), async (srv) => {
    for (const [conv, title] of [[undefined, '全局一'], [undefined, '全局二'], ['group:1', '群一的'], ['group:2', '群二的'], ['group:2', '群二的又一条']])
      assert.equal((await write(srv, conv, title)).status, 201);
    const scopes = (s) => Object.fromEntries(s.byScope.map((x) => [x.scope, x.count]));
    let r = await request(srv, '/api/v1/stats');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(scopes(r.json), { global: 2, 'group:1': 1, 'group:2': 2 });
    assert.equal(r.json.total, 5);
    const today = r.json.growth.items.at(-1);
    assert.equal(today.count, 5);

    r = await request(srv, '/api/v1/stats', { conv: 'group:1' });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(scopes(r.json), { global: 2, 'group:1': 1 });
    assert.equal(r.json.total, 3);
    assert.equal(r.json.growth.items.at(-1).count, 3);
    assert.ok(!r.text.includes('群二的'), 'another conversation\'s titles');
    r = await request(srv, '/api/v1/stats', { conv: 'private:9' });
    assert.deepEqual(scopes(r.json), { global: 2 });

    const history = (await request(srv, '/api/v1/history?limit=1&changesOnly=false')).json.total;
    for (const [q, field] of [['staleDays=abc', 'staleDays'], ['staleDays=0', 'staleDays'], ['bucket=month', 'bucket'], ['buckets=400', 'buckets'], ['limit=99', 'limit'], ['since=1', 'since'], ['staleDays=', 'staleDays']]) {
      r = await request(srv, `/api/v1/stats?${q}`);
      assert.equal(r.status, 400, `${q}: ${r.text}`);
      assert.equal(r.json.error.details.field, field, q);
      assert.match(r.json.error.message, new RegExp(`argument '${field}'`));
    }
    // issue18_minor_stale_days_blank: an empty staleDays is refused
    // (it quietly meant 30 before), naming the field and why
    r = await request(srv, '/api/v1/stats?staleDays=');
    assert.equal(r.json.error.details.reason, 'empty', r.text);
    r = await request(srv, '/api/v1/stats?bucket=week&buckets=4&staleDays=7&limit=3');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.growth.items.length, 4);
    assert.equal(r.json.stale.days, 7);
    assert.equal((await request(srv, '/api/v1/history?limit=1&changesOnly=false')).json.total, history);
  });
});
