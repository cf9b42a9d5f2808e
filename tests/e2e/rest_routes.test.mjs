// rest_routes.test.mjs — the REST route table of `zcor serve` (issue 13,
// src/server/rest.c) through a real server: a libzcor error keeps its
// code's status on every route (GET prefix and GET media/<file> once
// answered 400 for any failure, a store error as "invalid_argument" or as
// 400 "not_found"), a known path with another method is 404 naming the
// methods it takes (Allow), and %2F in a param reaches no other route.
//
// The store error is made by the sqlite3 shell (scripts/deps installs it
// for the tests): a table renamed under the running server, so its next
// read fails inside SQLite, which is zcor's "internal" (500).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

import { request as req, runThenStop, startServe } from '../net.mjs';
import { mkTmp } from '../tmpdir.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');

function cleanEnv() {
  const e = { ...process.env };
  delete e.ZCOR_DIR;
  delete e.ZCOR_TOKEN;
  return e;
}

function assertError(r, status, code) {
  assert.equal(r.status, status, `${r.status} ${r.text}`);
  assert.match(r.headers['content-type'] ?? '', /^application\/json/);
  assert.equal(r.json?.error?.code, code, r.text);
  assert.ok(r.json.error.message.length > 0, r.text);
  return r.json.error;
}

// Renames a table of the server's store behind its back (legacy mode: the
// shell has no zcor tokenizer, so the triggers are left as they are).
function renameTable(dir, from, to) {
  const r = spawnSync('sqlite3', [join(dir, 'memory.db'),
    `PRAGMA legacy_alter_table=ON; ALTER TABLE ${from} RENAME TO ${to};`], { encoding: 'utf8' });
  assert.equal(r.error, undefined, 'the sqlite3 shell is needed (scripts/deps test installs it)');
  assert.equal(r.status, 0, r.stderr);
}

const withServe = async (fn) => runThenStop(await startServe(BIN, mkTmp('zcor-rest-'), cleanEnv()), fn);

test('issue 13: GET prefix answers a store error with its own status, not 400', () => withServe(async (srv) => {
  assert.equal((await req(srv, '/api/v1/prefix')).status, 200);
  // a bad conversation is still the caller's mistake: 400
  assertError(await req(srv, '/api/v1/prefix?conversation=nope'), 400, 'invalid_argument');
  renameTable(srv.dir, 'nodes', 'nodes_gone');
  assertError(await req(srv, '/api/v1/prefix'), 500, 'internal');
}));

test('issue 13: GET media/<file> answers a store error with its own status, not 400 "not_found"', () => withServe(async (srv) => {
  const file = `${'0'.repeat(64)}.png`;
  assertError(await req(srv, `/api/v1/media/${file}`), 404, 'not_found');
  assertError(await req(srv, '/api/v1/media/not-an-image'), 400, 'invalid_argument');
  renameTable(srv.dir, 'media', 'media_gone');
  assertError(await req(srv, `/api/v1/media/${file}`), 500, 'internal');
}));

test('issue 13: a known path with another method is 404 with Allow; %2F in a param reaches no route', () => withServe(async (srv) => {
  const wrong = await req(srv, '/api/v1/check-reply');
  assertError(wrong, 404, 'not_found');
  assert.equal(wrong.headers.allow, 'POST');
  const node = await req(srv, '/api/v1/nodes/m1', { method: 'POST', body: {} });
  assertError(node, 404, 'not_found');
  assert.equal(node.headers.allow, 'GET, PUT, DELETE');
  const unknown = await req(srv, '/api/v1/nope');
  assertError(unknown, 404, 'not_found');
  assert.equal(unknown.headers.allow, undefined);

  const made = await req(srv, '/api/v1/nodes', { method: 'POST', body: { title: 't', content: 'c' } });
  assert.equal(made.status, 201, made.text);
  const id = made.json.node?.id ?? made.json.id;
  assert.ok(id, made.text);
  assert.equal((await req(srv, `/api/v1/nodes/${id}/trace`)).status, 200);
  // nodes/<id>%2Ftrace is no alias of nodes/<id>/trace
  assertError(await req(srv, `/api/v1/nodes/${id}%2Ftrace`), 404, 'not_found');
  // a conversation key is decoded once: %3A is ':', %253A is not
  const log = await req(srv, '/api/v1/conversations/group%3A1/messages', { method: 'POST',
    body: { messages: [{ id: 'a1', senderId: '111', text: 'hello' }] } });
  assert.equal(log.status, 200, log.text);
  assert.equal((await req(srv, '/api/v1/conversations/group:1')).status, 200);
  assert.notEqual((await req(srv, '/api/v1/conversations/group%253A1')).status, 200);
}));

// History: revert a change (issue 18)
test('issue18_revert_route: POST history/{seq}/revert answers 200, 409 with details, 404, 403 bound', () => withServe(async (srv) => {
  const made = await req(srv, '/api/v1/nodes', { method: 'POST', body: { title: 'r', content: 'one' } });
  assert.equal(made.status, 201, made.text);
  const id = made.json.node.id;
  assert.equal((await req(srv, `/api/v1/nodes/${id}`, { method: 'PUT', body: { title: 'r', content: 'two' } })).status, 200);
  const seq = (await req(srv, `/api/v1/history?operations=zcor_memory_write&targetId=${id}&limit=1`)).json.items[0].seq;
  // bound to a conversation: the operator's only
  assertError(await req(srv, `/api/v1/history/${seq}/revert`, { method: 'POST', conv: 'group:1' }), 403, 'forbidden');
  const ok = await req(srv, `/api/v1/history/${seq}/revert`, { method: 'POST' });
  assert.equal(ok.status, 200, ok.text);
  assert.equal(ok.json.reverted, seq);
  assert.deepEqual(ok.json.restored, [id]);
  assert.equal((await req(srv, `/api/v1/nodes/${id}`)).json.node.content, 'one');
  const again = assertError(await req(srv, `/api/v1/history/${seq}/revert`, { method: 'POST' }), 409, 'conflict');
  assert.equal(again.details.reason, 'already_reverted');
  assertError(await req(srv, '/api/v1/history/999999/revert', { method: 'POST' }), 404, 'not_found');
  assertError(await req(srv, '/api/v1/history/abc/revert', { method: 'POST' }), 404, 'not_found');
  assertError(await req(srv, `/api/v1/history/${seq}/revert`), 404, 'not_found'); // GET: not a route
}));
