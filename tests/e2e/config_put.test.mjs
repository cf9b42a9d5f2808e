// config_put.test.mjs — PUT /api/v1/config against a config.json edited
// by hand (issue 12, defect 6: it silently replaced a hand-edited invalid
// config.json with the last good settings plus the change, losing what
// the person had written). A PUT refuses (409, naming the problem) while
// the file is invalid, as synonym edits do, and otherwise changes only
// the keys it sets: every other key, and the order, stay as written —
// also when two PUTs of different keys race.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { request, runThenStop, startServe } from '../net.mjs';
import { mkTmp } from '../tmpdir.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');

function cleanEnv() {
  const e = { ...process.env };
  delete e.ZCOR_DIR;
  delete e.ZCOR_TOKEN;
  return e;
}

const put = (srv, body) => request(srv, '/api/v1/config', { method: 'PUT', body });

test('[issue 12 #6] PUT /api/v1/config refuses with 409 while config.json is invalid, and leaves the file as written', async () => {
  const dir = mkTmp('zcor-config-');
  const file = join(dir, 'config.json');
  const srv = await startServe(BIN, dir, cleanEnv());
  await runThenStop(srv, async () => {
    assert.equal((await put(srv, { recallChars: 3000 })).status, 200);
    // a person edits the file: a good key, and a typo in another
    const broken = [
      '{\n  "recallChars": 3000,\n  "mirror": true,\n  "relationships": "no"\n}\n',
      '{\n  "recallChars": 3000,\n  "mirror": true,\n', // cut short
      '{"recallChars": 3000, "recallChar": 10}\n', // unknown key
    ];
    for (const text of broken) {
      writeFileSync(file, text);
      const r = await put(srv, { recallChars: 4000 });
      assert.equal(r.status, 409, `${text}: ${r.status} ${r.text}`);
      assert.equal(r.json?.error?.code, 'conflict', r.text);
      assert.match(r.json.error.message, /config\.json/);
      assert.match(r.json.error.message, /by hand/);
      assert.equal(readFileSync(file, 'utf8'), text, 'config.json was overwritten');
    }
    assert.match((await put(srv, { relationships: true })).json.error.message, /recallChar/);
    // GET still shows the settings in use and what is wrong
    const cfg = await request(srv, '/api/v1/config');
    assert.equal(cfg.status, 200);
    assert.match(cfg.json.warning, /recallChar/);
    // fixed by hand: the PUT goes through and keeps what the person wrote
    writeFileSync(file, '{\n  "mirror": true,\n  "recallChars": 3000\n}\n');
    const ok = await put(srv, { recallChars: 4000 });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), { mirror: true, recallChars: 4000 });
  });
});

test('[issue 12 #6] PUT /api/v1/config changes only the keys it sets; every other key and their order stay', async () => {
  const dir = mkTmp('zcor-config-');
  const file = join(dir, 'config.json');
  const written = {
    botId: '3000000001',
    admission: { privateChats: false, groups: ['100000001', '100000002'], privates: null },
    recallChars: 5000,
    provider: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm', apiKeyEnv: 'ZCOR_TEST_KEY', timeoutMs: 5000 },
    recall: { profile: 'zcor' },
    mediaCacheMax: 50,
    memoryArchiveRatio: 0.5,
  };
  writeFileSync(file, `${JSON.stringify(written, null, 2)}\n`);
  const srv = await startServe(BIN, dir, cleanEnv());
  await runThenStop(srv, async () => {
    const r = await put(srv, { recallChars: 2000, relationships: false, recall: { profile: 'scored' } });
    assert.equal(r.status, 200, r.text);
    const after = JSON.parse(readFileSync(file, 'utf8'));
    assert.deepEqual(after, { ...written, recallChars: 2000, recall: { profile: 'scored' }, relationships: false });
    assert.deepEqual(Object.keys(after), [...Object.keys(written), 'relationships']);
  });
});

test('[issue 12 #6] two PUTs of different keys at once: neither change is lost', async () => {
  const dir = mkTmp('zcor-config-');
  const file = join(dir, 'config.json');
  const srv = await startServe(BIN, dir, cleanEnv());
  await runThenStop(srv, async () => {
    const N = 15;
    const writer = async (key, base) => {
      for (let i = 0; i < N; i++) {
        const r = await put(srv, { [key]: base + i });
        assert.equal(r.status, 200, r.text);
      }
    };
    // two browsers' tabs, each on a connection (and a pooled handle) of its own
    await Promise.all([writer('recallChars', 1000), writer('mediaCacheMax', 100), writer('viewMaxBytes', 10000)]);
    const after = JSON.parse(readFileSync(file, 'utf8'));
    assert.equal(after.recallChars, 1000 + N - 1, JSON.stringify(after));
    assert.equal(after.mediaCacheMax, 100 + N - 1, JSON.stringify(after));
    assert.equal(after.viewMaxBytes, 10000 + N - 1, JSON.stringify(after));
  });
});

// A caller bound to a conversation acts for one chat: it cannot change the
// operator's settings (admission, provider, recall), as it cannot restore
// (audit of issue 12).
test('[issue 12] a caller bound to a conversation cannot PUT the config', async () => {
  const dir = mkTmp('zcor-config-put-');
  const srv = await startServe(BIN, dir, cleanEnv());
  await runThenStop(srv, async () => {
    const before = await request(srv, '/api/v1/config');
    const r = await request(srv, '/api/v1/config', { method: 'PUT', body: { recallChars: 123 }, conv: 'group:222' });
    assert.equal(r.status, 403, r.text);
    assert.match(r.text, /only the operator/);
    const after = await request(srv, '/api/v1/config');
    assert.equal(after.text, before.text);
    assert.equal((await put(srv, { recallChars: 123 })).status, 200);
  });
});

test('issue16_digest_settings_validated: PUT /api/v1/config checks every digest key, naming the field (blank, out of range, wrong type, unknown zone) and changing nothing; good values land', async () => {
  const dir = mkTmp('zcor-config-digest-');
  const file = join(dir, 'config.json');
  const srv = await startServe(BIN, dir, cleanEnv());
  await runThenStop(srv, async () => {
    assert.equal((await put(srv, { recallChars: 3000 })).status, 200);
    const before = readFileSync(file, 'utf8');
    const bad = [
      [{ digestAtHour: '' }, /'digestAtHour'/],
      [{ digestAtHour: 24 }, /'digestAtHour' must be an integer from 0 to 23/],
      [{ digestAtHour: -1 }, /'digestAtHour'/],
      [{ digestAtHour: 3.5 }, /'digestAtHour'/],
      [{ digestMinLines: 0 }, /'digestMinLines'/],
      [{ digestMinLines: 'many' }, /'digestMinLines'/],
      [{ digestMaxChars: 10 }, /'digestMaxChars'/],
      [{ digestTimeoutMs: 999999999 }, /'digestTimeoutMs'/],
      [{ digestCatchUp: 'yes' }, /'digestCatchUp'/],
      [{ memory: 1 }, /'memory'/],
      [{ timeZone: 'Mars/Olympus_Mons' }, /'timeZone'.*Mars\/Olympus_Mons/],
      [{ timeZone: 8 }, /'timeZone'/],
    ];
    for (const [body, re] of bad) {
      const r = await put(srv, body);
      assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.status} ${r.text}`);
      assert.equal(r.json.error.code, 'invalid_argument');
      assert.match(r.json.error.message, re, JSON.stringify(body));
      assert.equal(readFileSync(file, 'utf8'), before, `${JSON.stringify(body)} changed config.json`);
    }
    const good = { digestAtHour: 3, digestMinLines: 7, digestMaxChars: 5000, digestTimeoutMs: 90000, digestCatchUp: false, timeZone: 'Asia/Shanghai', memory: false };
    assert.equal((await put(srv, good)).status, 200);
    const cfg = (await request(srv, '/api/v1/config')).json;
    for (const [k, v] of Object.entries(good)) assert.deepEqual(cfg[k], v, k);
    // a blank zone is the system's (null)
    assert.equal((await put(srv, { timeZone: '' })).status, 200);
    assert.equal((await request(srv, '/api/v1/config')).json.timeZone, null);
  });
});
