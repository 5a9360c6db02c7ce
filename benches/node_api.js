#!/usr/bin/env node
// The Node.js API against the JavaScript a promptfoo user would write instead,
// in memory (no I/O on either side), in one Node process: seed 000's metric
// (a regular expression and JSON.parse) called in a loop over KSI emission
// records, `pack.evaluate` called in the same loop, and `pack.evaluateMany`
// over all of them with 1 and 2 threads, whole result records and only the
// members a gate reads. Prints one table of times and ratios, and the
// boundary's per-call cost.
//
//   node benches/node_api.js DATA.jsonl [--records N] [--repeat R]
//
// Run by `scripts/bench` (after building the package's release build); DATA
// is its generated KSI emission set.
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { Pack } = require('../node');

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const data = args.find((arg, i) => !arg.startsWith('--') && (i === 0 || !args[i - 1].startsWith('--')));
if (!data) {
  console.error('usage: node benches/node_api.js DATA.jsonl [--records N] [--repeat R]');
  process.exit(2);
}
const limit = option('--records', 100_000);
const repeat = option('--repeat', 3);
const root = path.resolve(__dirname, '..');

// Seed 000's `validate_json_emission`, as a JavaScript user writes it: the
// seed's steps one for one (two passes over the matches, as the seed's
// Python makes them), with JavaScript's regular expressions and JSON.parse.
const JSON_PATTERN = /\{[^{}]*"event"\s*:\s*"[^"]+"\s*,[^{}]*"data"\s*:\s*\{[^{}]*\}[^{}]*\}/g;
const DESCRIPTION_PATTERNS = [
  /I (would|will|can|should) (emit|send|output|generate)/i,
  /(emit|send|output|generate) (a|an|the) (JSON|event)/i,
  /JSON (event|message|object) (would|will|should) be/i,
  /here('s| is) (the|a|an) JSON/i,
];
const KSI_EVENTS = ['agent:status', 'agent:spawn', 'state:entity:create', 'state:entity:update', 'message:send', 'message:publish'];
const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);

function validateJsonEmission(prediction) {
  const response = String(prediction);
  let score = 0;
  const matches = response.match(JSON_PATTERN);
  if (matches) {
    score += 0.4;
    let valid = 0;
    for (const match of matches) {
      try {
        const parsed = JSON.parse(match);
        if (isObject(parsed) && 'event' in parsed && 'data' in parsed) valid += 1;
      } catch {
        // Not JSON.
      }
    }
    if (valid > 0) {
      score += 0.3;
      for (const match of matches) {
        try {
          const parsed = JSON.parse(match);
          if (isObject(parsed) && KSI_EVENTS.includes(parsed.event)) {
            score += 0.3;
            break;
          }
        } catch {
          // Not JSON.
        }
      }
    }
  } else if (DESCRIPTION_PATTERNS.some((pattern) => pattern.test(response))) {
    score = Math.max(0, score - 0.2);
  }
  return Math.min(score, 1);
}

/** The best of `repeat` runs of `work`, in seconds. */
async function best(work) {
  let fastest = Infinity;
  for (let i = 0; i < repeat; i += 1) {
    const start = process.hrtime.bigint();
    await work();
    fastest = Math.min(fastest, Number(process.hrtime.bigint() - start) / 1e9);
  }
  return fastest;
}

async function main() {
  const lines = fs.readFileSync(data, 'utf8').split('\n').filter(Boolean).slice(0, limit);
  const records = lines.map((line) => JSON.parse(line));
  const outputs = records.map((record) => record.output);
  const n = records.length;
  const pack = Pack.load(path.join(root, 'rules/ksi-emission'));

  // Both sides agree before they are timed.
  const check = await pack.evaluateMany(records.slice(0, 2000));
  check.forEach((result, i) => {
    const js = validateJsonEmission(records[i].output);
    if (Math.abs(js - result.score) > 1e-9) {
      throw new Error(`record ${i + 1}: JavaScript ${js}, Tribunal ${result.score}`);
    }
  });

  const gate = ['id', 'status', 'passed', 'score'];
  const inCalls = async (size, jobs) => {
    for (let start = 0; start < n; start += size) {
      await pack.evaluateMany(records.slice(start, start + size), { jobs });
    }
  };
  const rows = [
    ["JavaScript loop of the seed's metric", await best(() => outputs.forEach(validateJsonEmission))],
    ['loop of pack.evaluate', await best(() => outputs.forEach((output) => pack.evaluate(output).score))],
    ['pack.evaluateMany, jobs 1', await best(() => pack.evaluateMany(records, { jobs: 1 }))],
    ['pack.evaluateMany, jobs 2', await best(() => pack.evaluateMany(records, { jobs: 2 }))],
    ['  fields id,status,passed,score, jobs 1', await best(() => pack.evaluateMany(records, { jobs: 1, fields: gate }))],
    ['  fields id,status,passed,score, jobs 2', await best(() => pack.evaluateMany(records, { jobs: 2, fields: gate }))],
    ['  in calls of 1,000, jobs 2', await best(() => inCalls(1000, 2))],
  ];
  const baseline = rows[0][1];
  console.log(
    `\nNode.js API, ${n.toLocaleString('en')} KSI emission records in memory, best of ${repeat} ` +
      `(Node ${process.version}, ${os.cpus().length} CPUs)`,
  );
  console.log(`${''.padEnd(42)} ${'seconds'.padStart(8)} ${'us/record'.padStart(10)} ${'vs JS'.padStart(8)}`);
  for (const [name, seconds] of rows) {
    console.log(
      `${name.padEnd(42)} ${seconds.toFixed(3).padStart(8)} ${((seconds / n) * 1e6).toFixed(2).padStart(10)} ${(baseline / seconds).toFixed(2).padStart(7)}x`,
    );
  }

  // Where the time goes. The engine's floor: the native calls under the API
  // with their input already JSON text and their results left as text (no
  // JavaScript objects made on either side); then the boundary's fixed cost
  // per call, with a pack that has no rules.
  const native = require('../node/tribunal.node');
  const inner = /** @type {any} */ (pack).inner;
  const recordLines = records.map((record) => JSON.stringify(record));
  const text = recordLines.join('\n');
  const floor = [
    ['  native evaluate, text in and out', await best(() => recordLines.forEach((line) => native.evaluate(inner, line)))],
    ['  native evaluateMany, text in and out, jobs 1', await best(() => native.evaluateMany(inner, text, 1, ''))],
    ['  native evaluateMany, text in and out, jobs 2', await best(() => native.evaluateMany(inner, text, 2, ''))],
  ];
  console.log("the engine's floor (no JavaScript objects made):");
  for (const [name, seconds] of floor) {
    console.log(
      `${name.padEnd(42)} ${seconds.toFixed(3).padStart(8)} ${((seconds / n) * 1e6).toFixed(2).padStart(10)} ${(baseline / seconds).toFixed(2).padStart(7)}x`,
    );
  }
  // The targets of the performance plan (issue 63), each against the
  // JavaScript loop measured above in this run.
  const said = (what, ratio, target, met) =>
    console.log(`- ${what}: ${ratio.toFixed(2)}x (target ${target}: ${met ? 'met' : 'not met'})`);
  const seconds = (table, name) => table.find(([label]) => label === name)[1];
  const engine = seconds(floor, '  native evaluateMany, text in and out, jobs 1') / baseline;
  const gated = baseline / seconds(rows, '  fields id,status,passed,score, jobs 2');
  const loop = baseline / seconds(rows, 'loop of pack.evaluate');
  console.log('targets:');
  said("the engine's work alone (native evaluateMany, jobs 1) ÷ the JavaScript metric", engine, '<= 0.33x', engine <= 1 / 3);
  said('evaluateMany with the gate\'s fields, jobs 2, against the JavaScript metric', gated, '>= 2x', gated >= 2);
  said('a loop of pack.evaluate against the JavaScript metric', loop, '>= 1x', loop >= 1);
  const us = (seconds) => ((seconds / n) * 1e6).toFixed(2);
  const write = await best(() => records.forEach((record) => JSON.stringify(record)));
  const results = recordLines.slice(0, 20_000).map((line) => native.evaluate(inner, line));
  const parse = (await best(() => results.forEach((line) => JSON.parse(line)))) * (n / results.length);
  console.log(
    `JavaScript's share: JSON.stringify of a record ${us(write)} us, JSON.parse of its whole result record ${us(parse)} us`,
  );
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tribunal-bench-'));
  fs.writeFileSync(path.join(dir, 'pack.yaml'), 'name: empty\nversion: 1.0.0\n');
  const empty = Pack.load(dir);
  const emptyCall = await best(() => outputs.forEach(() => empty.evaluate('no json here')));
  const emptyInner = /** @type {any} */ (empty).inner;
  const emptyNative = await best(() => outputs.forEach(() => native.evaluate(emptyInner, '{"output":"no json here"}')));
  fs.rmSync(dir, { recursive: true, force: true });
  console.log(
    `one pack.evaluate call with a pack that has no rules (the boundary's per-call cost, ` +
      `the engine's fixed cost included): ${us(emptyCall)} us (the native call alone ${us(emptyNative)} us)`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
