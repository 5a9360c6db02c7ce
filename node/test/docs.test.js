// Every example of docs/node.md runs: each ```js block is run by node from the
// repository root (with `require('tribunal')` the installed package), and what
// it prints is compared, line by line, with the `// ` comment after each
// `console.log` in the block (a comment ending in `...` matches any rest of
// the line).
'use strict';

const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { test } = require('node:test');

const { root } = require('./support.js');

const project = process.env.TRIBUNAL_NODE_TEST_PROJECT;
const skip = project ? false : 'TRIBUNAL_NODE_TEST_PROJECT is not set: run scripts/node-test, which installs the package';
const guide = path.join(root, 'docs/node.md');

/** The ```js blocks of the guide, with the line each starts on. */
function blocks() {
  const found = [];
  const lines = fs.readFileSync(guide, 'utf8').split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    if (lines[i].trim() !== '```js') continue;
    const start = i + 1;
    const body = [];
    for (i += 1; i < lines.length && lines[i].trim() !== '```'; i += 1) body.push(lines[i]);
    found.push({ line: start + 1, source: body.join('\n') });
  }
  return found;
}

test('the guide has examples', () => {
  assert.ok(blocks().length >= 6);
});

for (const { line, source } of blocks()) {
  test(`docs/node.md:${line}`, { skip }, () => {
    const expected = [...source.matchAll(/console\.log\(.*\); \/\/ (.*)$/gm)].map((match) => match[1]);
    assert.ok(expected.length > 0, 'a block shows what it prints');
    const run = spawnSync(process.execPath, ['-e', source], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, NODE_PATH: path.resolve(/** @type {string} */ (project), 'node_modules') },
    });
    assert.equal(run.status, 0, run.stderr);
    const printed = run.stdout.split('\n').filter(Boolean);
    assert.equal(printed.length, expected.length, `printed:\n${run.stdout}`);
    printed.forEach((text, i) => {
      const want = expected[i];
      if (want.endsWith('...')) assert.ok(text.startsWith(want.slice(0, -3)), `${text}\n  is not\n${want}`);
      else assert.equal(text, want);
    });
  });
}
