// recall.test.mjs — `zcor recall --explain` (issue 17): the answer shows
// the formula in use — the weights of recall.weights in config.json (a
// preset or an operator's own), the lexical stage's shape and the
// statistics it took over the records the conversation may see — and a
// bad recall.weights is refused with a message naming the key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { mkTmp } from '../tmpdir.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');

function zcor(args) {
  const env = { ...process.env };
  delete env.ZCOR_DIR;
  const r = spawnSync(BIN, args, { env, encoding: 'utf8', timeout: 60000 });
  if (r.error) throw r.error;
  return r;
}

function write(dir, title, content, conv) {
  const r = zcor(['--dir', dir, ...(conv ? ['--conversation', conv] : []), 'tool', 'zcor_memory_write',
    JSON.stringify({ title, content })]);
  assert.equal(r.status, 0, r.stdout + r.stderr);
}

function explain(dir, message) {
  const r = zcor(['recall', '--dir', dir, '--conversation', 'group:1', '--message', message, '--explain']);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

test('recall --explain: the formula, its weights, the lexical shape and the visible statistics', () => {
  const dir = mkTmp('zcor-recall-');
  write(dir, '周五晚上固定开黑', '九点上号，老王组织');
  write(dir, '私聊里的开黑计划', '只在私聊说过', 'private:7');
  let j = explain(dir, '今晚开黑几点上号');
  const f = j.formula;
  assert.equal(f.profile, 'scored');
  assert.equal(f.weights.preset, 'default');
  assert.match(f.score, /^score = [\d.]+·entity \+ [\d.]+·lexical \+ [\d.]+·feedback \+ [\d.]+·context \+ [\d.]+·recency \+ [\d.]+·salience \+ [\d.]+·sectionPrior \+ -?[\d.]+·expired$/);
  assert.match(f.lexical, /idf\(t\) = ln\(1 \+ \(N − df \+ 0\.5\)\/\(df \+ 0\.5\)\); k1 = [\d.]+, b = [\d.]+/);
  // issue 17 review: the postings rule — by term frequency, not the newest
  assert.match(f.lexical, /postings are read by impact: .* of highest tf .* the newest among equal tf, found among its newest \d+ \(\d+ of a single CJK character; a record outside/);
  assert.equal(f.statistics.visibleRecords, 1); // the private record is not counted
  assert.ok(f.statistics.tokensUsed > 0 && f.statistics.queryMass > 0, JSON.stringify(f.statistics));
  const hit = j.explain.find((x) => x.title === '周五晚上固定开黑');
  assert.ok(hit && hit.features.lexical > 0, JSON.stringify(j.explain));
  const w = f.weights;
  const want = w.entity * hit.features.entity + w.lexical * hit.features.lexical + w.feedback * hit.features.feedback
    + w.context * hit.features.context + w.recency * hit.features.recency + w.salience * hit.features.salience
    + w.sectionPrior * hit.features.sectionPrior + w.expired * hit.features.expired;
  assert.ok(Math.abs(hit.score - want) < 1e-9, `${hit.score} vs ${want}`);

  // the seed-003 preset, and an operator's own weights, are what the formula shows
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ recall: { weights: 'seed003' } }));
  j = explain(dir, '今晚开黑几点上号');
  assert.equal(j.formula.weights.preset, 'seed003');
  assert.ok(j.formula.score.startsWith('score = 3·entity + 2·lexical + 0·feedback + 0·context + 1·recency + 0.8·salience + 0.5·sectionPrior + -5·expired'), j.formula.score);
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ recall: { weights: { recency: 0.25 } } }));
  j = explain(dir, '今晚开黑几点上号');
  assert.equal(j.formula.weights.preset, 'custom');
  assert.equal(j.formula.weights.recency, 0.25);
  assert.match(j.formula.score, /\+ 0\.25·recency \+/);

  // the zcor profile is seed 000's order, said in words
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ recall: { profile: 'zcor' } }));
  j = explain(dir, '今晚开黑几点上号');
  assert.equal(j.formula.profile, 'zcor');
  assert.match(j.formula.order, /distinct terms hit desc, updatedAt desc, id asc/);
});

test('recall.weights in config.json: a bad one is reported by key, and the last good weights stay', () => {
  const dir = mkTmp('zcor-recall-');
  write(dir, '周五晚上固定开黑', '九点上号');
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ recall: { weights: { recency: 0.25 } } }));
  let j = explain(dir, '开黑');
  assert.equal(j.formula.weights.recency, 0.25);
  for (const [weights, needle] of [[{ lexicon: 1 }, "unknown key 'recall.weights.lexicon'"],
    [{ entity: 'high' }, "'recall.weights.entity' must be a number from -100 to 100"],
    ['seed', "'recall.weights' must be \"default\", \"seed003\""]]) {
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ recall: { weights } }));
    j = explain(dir, '开黑');
    assert.ok(j.warning && j.warning.includes(needle), `${JSON.stringify(weights)}: ${j.warning}`);
    assert.equal(j.formula.weights.recency, 0.25); // the last good settings
  }
});
