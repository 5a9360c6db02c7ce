// The install script says that it compiles where the user sees it: npm keeps
// an install script's output to itself (unless it fails), so without a
// terminal the line goes to npm's own stderr (a CI log), once.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { test } = require('node:test');

const { root, tempDir } = require('./support.js');

test('without a terminal, the install line reaches npm\'s own stderr', { skip: process.platform !== 'linux' }, () => {
  const dir = tempDir();
  const log = path.join(dir, 'ci.log');
  const build = path.join(root, 'node', 'build.js');
  // The script, as npm runs it: through a shell, its stderr a pipe npm keeps.
  const script = `require(${JSON.stringify(build)}).announce('tribunal: compiling', { tty: ${JSON.stringify(path.join(dir, 'no', 'tty'))} })`;
  const npm = `
    const { spawnSync } = require('node:child_process');
    const r = spawnSync('sh', ['-c', ${JSON.stringify(`"${process.execPath}" -e "${script.replace(/"/g, '\\"')}"`)}], { stdio: ['ignore', 'ignore', 'pipe'] });
    process.exit(r.status);`;
  fs.writeFileSync(log, 'earlier lines of the log\n');
  const fd = fs.openSync(log, 'a');
  const ran = spawnSync(process.execPath, ['-e', npm], { stdio: ['ignore', 'ignore', fd] });
  fs.closeSync(fd);
  assert.equal(ran.status, 0);
  assert.equal(fs.readFileSync(log, 'utf8'), 'earlier lines of the log\ntribunal: compiling\n');
});
