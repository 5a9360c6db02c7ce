#!/usr/bin/env node
// Generates the package's TypeScript declarations, index.d.ts and
// promptfoo.d.ts, from the JSDoc types of index.js and promptfoo.js (tsc,
// tsconfig.json); with --check, only says whether the shipped ones are up to
// date (node/test/types.test.js). `npm run types` in node/.
//
//   node types.js [--check] [--tsc PATH] [--type-roots DIR]
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const args = process.argv.slice(2);
const option = (name) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const check = args.includes('--check');
const here = __dirname;
const tsc = option('--tsc') ?? require.resolve('typescript/bin/tsc', { paths: [here] });
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'tribunal-types-'));
try {
  const command = [tsc, '-p', path.join(here, 'tsconfig.json'), '--outDir', out];
  const typeRoots = option('--type-roots');
  if (typeRoots) command.push('--typeRoots', typeRoots);
  const run = spawnSync(process.execPath, command, { encoding: 'utf8' });
  if (run.status !== 0) {
    process.stderr.write(`tsc failed:\n${run.stdout}${run.stderr}`);
    process.exit(1);
  }
  const stale = [];
  for (const name of ['index.d.ts', 'promptfoo.d.ts']) {
    const made = fs.readFileSync(path.join(out, name), 'utf8');
    const shipped = path.join(here, name);
    if (check) {
      if (!fs.existsSync(shipped) || fs.readFileSync(shipped, 'utf8') !== made) stale.push(name);
    } else {
      fs.writeFileSync(shipped, made);
    }
  }
  if (stale.length > 0) {
    process.stderr.write(`${stale.join(' and ')} are not what index.js and promptfoo.js declare: run \`npm run types\` in node/\n`);
    process.exit(1);
  }
} finally {
  fs.rmSync(out, { recursive: true, force: true });
}
