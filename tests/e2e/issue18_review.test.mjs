// issue18_review.test.mjs — issue 18's review (s23-audit18) over HTTP:
// a memory's title of spaces only is refused naming 'title' (a write and
// a merge — the bulk merge form sends what the operator typed), changing
// nothing; a parent refused (itself or a descendant, another scope, none
// such) carries details {field: 'parentId', reason} for the page's words.
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

test('issue18_blank_title_refused: a write or merge titled with spaces only is 400 naming title, nothing changed', async () => {
  await withServe(BIN, mkTmp('zcor-i18r-'), env(), async (srv) => {
    const mk = async (title) => (await request(srv, '/api/v1/nodes', { method: 'POST', body: { title, content: 'x' } })).json.node;
    const a = await mk('甲');
    const b = await mk('乙');
    for (const title of ['   ', ' \t\n', '\u3000\u3000', '\u00a0']) {
      const w = await request(srv, '/api/v1/nodes', { method: 'POST', body: { title, content: 'x' } });
      assert.equal(w.status, 400, w.text);
      assert.deepEqual(w.json.error.details, { field: 'title', reason: 'blank' });
      assert.match(w.json.error.message, /'title'.*blank/);
      const u = await request(srv, `/api/v1/nodes/${a.id}`, { method: 'PUT', body: { title, content: 'y' } });
      assert.equal(u.status, 400, u.text);
      const m = await request(srv, '/api/v1/merge', { method: 'POST', body: { ids: [a.id, b.id], title, content: 'x', reason: '重复' } });
      assert.equal(m.status, 400, m.text);
      assert.deepEqual(m.json.error.details, { field: 'title', reason: 'blank' });
    }
    // nothing changed: two memories, neither superseded, 甲's content kept
    const all = (await request(srv, '/api/v1/nodes?includeSuperseded=true')).json;
    assert.deepEqual(all.items.map((n) => [n.title, n.content, n.supersededBy]).sort(), [['乙', 'x', null], ['甲', 'x', null]]);
    // a title with a character between spaces is a title
    const ok = await request(srv, '/api/v1/nodes', { method: 'POST', body: { title: ' 丙 ', content: 'x' } });
    assert.equal(ok.status, 201, ok.text);
  });
});

test('issue18_parent_refusal_details: itself, a descendant, another scope, none such — each names parentId and why', async () => {
  await withServe(BIN, mkTmp('zcor-i18r-'), env(), async (srv) => {
    const mk = async (body, conv) => (await request(srv, '/api/v1/nodes', { method: 'POST', body, conv })).json.node;
    const a = await mk({ title: '上', content: 'a' });
    const b = await mk({ title: '下', content: 'b', parentId: a.id });
    const g = await mk({ title: '群里的', content: 'g' }, 'group:1');
    const move = (id, parentId, conv) => request(srv, `/api/v1/nodes/${id}`, { method: 'PUT', body: { title: 't', content: 'c', parentId }, conv });
    for (const [id, parent, conv, status, reason] of [
      [a.id, a.id, undefined, 409, 'cycle'], [a.id, b.id, undefined, 409, 'cycle'],
      [a.id, g.id, undefined, 409, 'scope'], [a.id, 'm999999', undefined, 404, 'not_found']]) {
      const r = await move(id, parent, conv);
      assert.equal(r.status, status, r.text);
      assert.deepEqual(r.json.error.details, { field: 'parentId', reason }, `${parent}: ${r.text}`);
    }
    assert.equal((await request(srv, `/api/v1/nodes/${a.id}`)).json.node.title, '上');
  });
});

test('issue18_people_sort_affinity: GET people?sort=affinity / affinityLow / updated; another sort is 400 naming it', async () => {
  await withServe(BIN, mkTmp('zcor-i18r-'), env(), async (srv) => {
    for (const [id, affinity] of [['101', 10], ['102', -50], ['103', 90], ['104', 0]])
      assert.equal((await request(srv, `/api/v1/people/${id}`, { method: 'PUT', body: { name: `人${id}`, affinity, relationship: '群友', reason: '测试' } })).status, 200);
    const order = async (sort) => (await request(srv, `/api/v1/people${sort ? `?sort=${sort}` : ''}`)).json.items.map((p) => p.personId);
    assert.deepEqual(await order('affinity'), ['103', '101', '104', '102']);
    assert.deepEqual(await order('affinityLow'), ['102', '104', '101', '103']);
    assert.deepEqual(await order('updated'), ['104', '103', '102', '101']);
    assert.deepEqual(await order(''), ['104', '103', '102', '101']);
    const bad = await request(srv, '/api/v1/people?sort=name');
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.json.error.details.field, 'sort');
    // paged in that order
    const p2 = (await request(srv, '/api/v1/people?sort=affinity&limit=2&offset=2')).json;
    assert.deepEqual(p2.items.map((p) => p.personId), ['104', '102']);
    assert.equal(p2.total, 4);
  });
});
