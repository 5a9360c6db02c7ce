// Shared by the tests: where the repository, the CLI and the plugins are.
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

/** The repository. */
const root = path.resolve(__dirname, '..', '..');
const target = process.env.CARGO_TARGET_DIR ? path.resolve(process.env.CARGO_TARGET_DIR) : path.join(root, 'target');
/** The package under test: node/ (built from source by scripts/node-test), or an
 * installed copy (TRIBUNAL_NODE_PACKAGE; scripts/dist-test installs the release
 * tarballs into a new project and points here). */
const packagePath = process.env.TRIBUNAL_NODE_PACKAGE ? path.resolve(process.env.TRIBUNAL_NODE_PACKAGE) : path.join(root, 'node');
/** The debug build's folder: the CLI, and the plugin libraries the example packs load. */
const pluginDir = path.join(target, 'debug');
/** The `tribunal` command the results are compared with (scripts/node-test builds it). */
const cliPath = process.env.TRIBUNAL_BIN ? path.resolve(process.env.TRIBUNAL_BIN) : path.join(pluginDir, 'tribunal');

/**
 * Runs the CLI in the repository; returns its standard output. Its exit
 * status 1 (a record that did not pass, an ERROR record) is no failure here.
 * @param {string[]} args
 */
function cli(args) {
  const run = spawnSync(cliPath, args, { cwd: root, encoding: 'utf8', maxBuffer: 1 << 30 });
  if (run.error) throw run.error;
  if (run.status !== 0 && run.status !== 1) {
    throw new Error(`tribunal ${args.join(' ')} exited with ${run.status}: ${run.stderr}`);
  }
  return run.stdout;
}

/** A new empty folder, removed when the process ends. */
function tempDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tribunal-node-'));
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The example data sets and the packs that judge them (every one shipped). */
const DATA_SETS = [
  ['rules/ksi-emission', 'examples/data/ksi-emission.jsonl'],
  ['rules/json-eval', 'examples/data/json-eval.jsonl'],
  ['rules/context-agent', 'examples/data/context-agent.jsonl'],
  ['rules/agent-response', 'examples/data/agent-response.jsonl'],
  ['rules/scripted-fields', 'examples/data/scripted-fields.jsonl'],
  ['rules/structured-output', 'examples/data/structured-output.jsonl'],
  ['examples/packs/invoice-summary', 'examples/data/invoice-summary.jsonl'],
  ['examples/packs/tool-calls', 'examples/data/tool-calls.jsonl'],
  ['examples/packs/rag-citations', 'examples/data/rag-citations.jsonl'],
  ['examples/packs/travel-agent', 'examples/data/travel-agent.jsonl'],
  ['examples/packs/travel-agent', 'examples/data/travel-agent-generated.jsonl'],
];

module.exports = { root, packagePath, target, pluginDir, cliPath, cli, tempDir, DATA_SETS };
