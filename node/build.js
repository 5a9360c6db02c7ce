#!/usr/bin/env node
// Compiles the package's native half (tribunal.node) from the Rust sources, with
// napi-rs's command line: run by `npm install` (the package's install script),
// and by hand with `npm run build` after a change to the Rust code.
//
//   node build.js [--debug]
//
// It needs Rust (cargo) on the PATH. TRIBUNAL_NODE_PROFILE=debug builds without
// optimisations (what --debug does). The build goes to the workspace's target/
// (or CARGO_TARGET_DIR), so a second install reuses the first's work.
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const debug = process.argv.includes('--debug') || process.env.TRIBUNAL_NODE_PROFILE === 'debug';
/**
 * Says `line` where the user sees it. npm shows an install script's output
 * only when it fails (or with --foreground-scripts): the line goes to our
 * stderr (npm's copy), and to the terminal when there is one, else to the
 * stderr of the nearest ancestor that writes somewhere else than we do
 * (npm's own: a CI log), so an install never looks like a hang.
 */
function announce(line, { tty = '/dev/tty' } = {}) {
  process.stderr.write(`${line}\n`);
  if (process.stderr.isTTY) return;
  try {
    fs.writeFileSync(tty, `${line}\n`);
    return;
  } catch {
    // No terminal.
  }
  const stderr = ancestorStderr();
  if (stderr) {
    try {
      fs.writeFileSync(stderr, `${line}\n`, { flag: 'a' });
    } catch {
      // Nowhere else to say it: npm has it.
    }
  }
}

/** The stderr (`/proc/PID/fd/2`) of the nearest of a few ancestors whose
 * stderr is not ours (Linux; `null` elsewhere or when there is none). */
function ancestorStderr() {
  let ours;
  try {
    ours = fs.fstatSync(2);
  } catch {
    return null;
  }
  let pid = process.ppid;
  for (let level = 0; level < 4 && pid > 1; level += 1) {
    try {
      const fd = `/proc/${pid}/fd/2`;
      const theirs = fs.statSync(fd);
      if (theirs.dev !== ours.dev || theirs.ino !== ours.ino) return fd;
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      return null;
    }
  }
  return null;
}

module.exports = { announce };
if (require.main !== module) return;
const say = announce;

say(
  `tribunal: compiling the native engine from source (cargo, ${debug ? 'debug' : 'release'} build); ` +
    'the first build takes a few minutes...',
);

const cargo = spawnSync('cargo', ['--version'], { encoding: 'utf8' });
if (cargo.error || cargo.status !== 0) {
  console.error(
    'tribunal: cargo was not found: installing this package compiles it from its Rust sources.\n' +
      'Install Rust (https://rustup.rs), then run npm install again.',
  );
  process.exit(1);
}

const here = __dirname;
const cli = napiCli();
const napi = path.join(path.dirname(cli), require(cli).bin.napi);
const args = [napi, 'build', '--cwd', here, '--output-dir', here, '--dts', 'native.d.ts', '--no-dts-header'];
if (!debug) args.push('--release');
const built = spawnSync(process.execPath, args, { stdio: 'inherit' });
if (built.status !== 0) {
  console.error(`tribunal: the build failed (napi build exited with ${built.status ?? built.signal})`);
  process.exit(1);
}
say(`tribunal: built ${path.join(here, 'tribunal.node')}`);

/**
 * Where napi-rs's command line is: installed with the package's dependencies
 * (`npm install ./node` from the folder above), or else (the package linked
 * into a project elsewhere, whose install leaves a linked folder's
 * dependencies out) installed now into the package's own node_modules/.
 */
function napiCli() {
  const find = () => require.resolve('@napi-rs/cli/package.json', { paths: [here] });
  try {
    return find();
  } catch {
    // Not installed: installed below.
  }
  const version = require('./package.json').dependencies['@napi-rs/cli'];
  say(`tribunal: installing its build tool, @napi-rs/cli@${version}, into ${path.join(here, 'node_modules')}`);
  const npm = process.env.npm_execpath;
  const [command, first] = npm ? [process.execPath, [npm]] : ['npm', []];
  const args = [...first, 'install', '--no-save', '--no-package-lock', '--ignore-scripts', '--omit=dev',
    '--no-audit', '--no-fund', `@napi-rs/cli@${version}`];
  const installed = spawnSync(command, args, { cwd: here, stdio: 'inherit' });
  if (installed.status !== 0) {
    console.error('tribunal: @napi-rs/cli did not install (is the npm registry reachable?)');
    process.exit(1);
  }
  return find();
}
