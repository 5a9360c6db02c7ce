// Results from Node equal the CLI's result records, for every shipped example
// data set: from `evaluateMany` (records as objects and as lines, any jobs) and
// from `evaluate`, one at a time.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { test } = require('node:test');

const { root, packagePath, cli, pluginDir, DATA_SETS } = require('./support.js');

const { Pack } = require(packagePath);

test('every example data set is covered', () => {
  const shipped = fs
    .readdirSync(path.join(root, 'examples/data'))
    .filter((name) => name.endsWith('.jsonl'))
    .map((name) => `examples/data/${name}`)
    .sort();
  assert.deepEqual(shipped, DATA_SETS.map(([, data]) => data).sort());
});

for (const [packPath, data] of DATA_SETS) {
  test(`results equal the CLI's records: ${data}`, async () => {
    const cliLines = cli(['eval', packPath, '--input', data, '--plugin-dir', pluginDir, '--allow-plugins'])
      .split('\n')
      .filter(Boolean);
    const expected = cliLines.map((line) => JSON.parse(line));
    const lines = fs.readFileSync(path.join(root, data), 'utf8').split('\n').filter(Boolean);
    assert.equal(lines.length, expected.length);
    const pack = Pack.load(path.join(root, packPath), { pluginDirs: [pluginDir], allowPlugins: true });

    const records = lines.map((line) => JSON.parse(line));
    assert.deepStrictEqual(await pack.evaluateMany(records, { jobs: 2 }), expected);
    // The lines themselves, read as the CLI reads them.
    assert.deepStrictEqual(await pack.evaluateMany(lines, { jobs: 1 }), expected);
    // Only some fields, as `eval --fields`.
    const fields = ['id', 'status', 'score'];
    const some = cli(['eval', packPath, '--input', data, '--plugin-dir', pluginDir, '--allow-plugins', '--fields', fields.join(',')])
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    assert.deepStrictEqual(await pack.evaluateMany(records, { fields }), some);

    // One at a time: the same records, without the line.
    for (const [i, record] of records.entries()) {
      const { line, ...alone } = expected[i];
      const options = { expected: record.expected, meta: record.meta, id: record.id, messages: record.messages };
      assert.deepStrictEqual(pack.evaluate(record.output, options), alone);
      if (i % 4 === 0) {
        assert.deepStrictEqual(await pack.evaluateAsync(record.output, options), alone);
      }
    }
  });
}

test("decide gives the decisions the CLI prints, on generated proposals", () => {
  const pack = Pack.load(path.join(root, 'examples/packs/support-agent'));
  const lines = fs
    .readFileSync(path.join(root, 'tests/fixtures/proposals.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean);
  const file = path.join(require('./support.js').tempDir(), 'proposal.json');
  const verdicts = new Set();
  for (const line of lines.slice(0, 40)) {
    const record = JSON.parse(line);
    const decisions = pack.decide(record.messages, { id: record.id });
    fs.writeFileSync(file, line);
    const printed = JSON.parse(cli(['check', 'examples/packs/support-agent', file, '--proposed', '--json']));
    assert.deepEqual(decisions, printed, line);
    for (const decision of decisions.decisions) verdicts.add(decision.decision);
  }
  assert.deepEqual([...verdicts].sort(), ['allow', 'deny']);
  assert.throws(() => pack.decide('not messages'), TypeError);
});
