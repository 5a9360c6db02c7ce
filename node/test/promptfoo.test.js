// Tribunal as a promptfoo assertion, in a real `promptfoo eval` run: promptfoo's
// `echo` provider gives back each fixed output (no network), the assertion
// module judges it, and promptfoo's JSON output shows each test passing or
// failing with Tribunal's status, and with its score.
'use strict';

const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { test } = require('node:test');

const { root, cli, tempDir } = require('./support.js');

const project = process.env.TRIBUNAL_NODE_TEST_PROJECT;
const skip = project ? false : 'TRIBUNAL_NODE_TEST_PROJECT is not set: run scripts/node-test, which installs promptfoo';

/**
 * Runs `promptfoo eval` on the records of `data` judged by the pack at
 * `packPath`; returns promptfoo's results and the CLI's result records.
 * @param {string} packPath
 * @param {string} data
 */
function promptfooRun(packPath, data) {
  const projectDir = path.resolve(/** @type {string} */ (project));
  const dir = tempDir();
  const records = fs
    .readFileSync(path.join(root, data), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))
    .filter((record) => typeof record.output === 'string');
  const config = {
    description: `Tribunal's ${packPath} as a promptfoo assertion`,
    prompts: ['{{output}}'],
    providers: ['echo'],
    defaultTest: {
      assert: [
        {
          type: 'javascript',
          // As a user installs it: the package in the project's node_modules.
          value: `file://${path.join(projectDir, 'node_modules/tribunal/promptfoo.js')}`,
          config: { pack: path.join(root, packPath) },
        },
      ],
    },
    tests: records.map((record, i) => {
      const vars = { output: record.output };
      if (record.expected !== undefined) vars.expected = record.expected;
      if (record.meta !== undefined) vars.meta = record.meta;
      return { description: `record ${i + 1}`, vars };
    }),
  };
  const configFile = path.join(dir, 'promptfooconfig.json');
  fs.writeFileSync(configFile, JSON.stringify(config, null, 2));
  const out = path.join(dir, 'results.json');
  const run = spawnSync(
    path.join(projectDir, 'node_modules/.bin/promptfoo'),
    ['eval', '-c', configFile, '-o', out, '--no-cache', '--no-progress-bar', '-j', '2'],
    {
      cwd: dir,
      encoding: 'utf8',
      env: {
        ...process.env,
        PROMPTFOO_CONFIG_DIR: path.join(dir, '.promptfoo'),
        PROMPTFOO_DISABLE_TELEMETRY: '1',
        PROMPTFOO_DISABLE_UPDATE: '1',
        PROMPTFOO_DISABLE_SHARING: '1',
      },
    },
  );
  // promptfoo exits 100 when a test failed.
  assert.ok(run.status === 0 || run.status === 100, `promptfoo eval exited ${run.status}:\n${run.stdout}\n${run.stderr}`);
  const results = JSON.parse(fs.readFileSync(out, 'utf8')).results.results;
  const dataFile = path.join(dir, 'data.jsonl');
  fs.writeFileSync(dataFile, records.map((record) => `${JSON.stringify(record)}\n`).join(''));
  const expected = cli(['eval', packPath, '--input', dataFile])
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  return { results, expected };
}

for (const [packPath, data] of [
  ['rules/ksi-emission', 'examples/data/ksi-emission.jsonl'],
  ['rules/json-eval', 'examples/data/json-eval.jsonl'],
  ['rules/structured-output', 'examples/data/structured-output.jsonl'],
]) {
  test(`promptfoo eval: each test's pass and score are Tribunal's (${packPath})`, { skip }, () => {
    const { results, expected } = promptfooRun(packPath, data);
    assert.equal(results.length, expected.length);
    const byName = new Map(results.map((result) => [result.testCase.description, result]));
    let passed = 0;
    expected.forEach((record, i) => {
      const result = byName.get(`record ${i + 1}`);
      assert.ok(result, `promptfoo has no result for record ${i + 1}`);
      assert.equal(result.success, record.status === 'PASS', `record ${i + 1}: ${record.status}`);
      assert.equal(result.score, record.score ?? 0, `record ${i + 1}`);
      // The assertion's own grading: the reason names the status and each
      // issue's code; one component per metric.
      const grading = result.gradingResult.componentResults[0];
      assert.equal(grading.pass, record.status === 'PASS');
      assert.match(grading.reason, new RegExp(`^Tribunal ${record.status}`));
      for (const issue of record.issues) assert.ok(grading.reason.includes(issue.code), issue.code);
      assert.equal(grading.componentResults.length, Object.keys(record.metrics).length);
      if (record.status === 'PASS') passed += 1;
    });
    // The data sets hold both outcomes: the comparison can fail both ways.
    assert.ok(passed > 0 && passed < expected.length, `${passed} of ${expected.length} passed`);
  });
}
