// The package's API: loading and its errors, a pack's identity, prompt and
// schema, evaluation of anything it is given (bad input is an ERROR result,
// never an exception or a crash), evaluateMany's options, streaming.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { test } = require('node:test');

const { Pack, Stream, Watched, PackError, TribunalError, watch, chunkText } = require('..');
const { root, cli, tempDir } = require('./support.js');

const KSI = path.join(root, 'rules/ksi-emission');
const EMITTED = 'Done. {"event": "agent:spawn", "data": {"step": 5}}';

test('a pack loads once and tells what it is, as the CLI does', () => {
  const pack = Pack.load(KSI);
  assert.equal(pack.name, 'ksi-emission');
  assert.equal(pack.label, `ksi-emission@${pack.version}`);
  assert.match(pack.revision, /^[0-9a-f]{16}$/);
  assert.deepEqual(pack.metrics, ['validate_json_emission']);
  assert.equal(pack.path, KSI);
  const result = pack.evaluate(EMITTED);
  assert.equal(result.pack, pack.label);
  assert.equal(result.revision, pack.revision);
});

test("prompt and jsonSchema are `tribunal prompt`'s", () => {
  const packPath = 'rules/structured-output';
  const pack = Pack.load(path.join(root, packPath));
  assert.equal(pack.prompt(), cli(['prompt', packPath]).replace(/\n$/, ''));
  assert.deepEqual(pack.jsonSchema(), JSON.parse(cli(['prompt', packPath, '--schema'])));
  // What OpenAI's strict subset cannot express is said, as the CLI says it.
  assert.throws(() => pack.jsonSchema({ strict: true }), (err) => err instanceof TribunalError && /strict mode cannot express a map/.test(err.message));
  // A pack without a contract has neither.
  const ksi = Pack.load(KSI);
  assert.equal(ksi.prompt(), null);
  assert.equal(ksi.jsonSchema(), null);
});

test('a pack that does not load throws a PackError naming file, line and column', () => {
  const dir = tempDir();
  fs.writeFileSync(path.join(dir, 'pack.yaml'), 'name: broken\nversion: 1.0.0\npipeline:\n  metrics:\n    - use: no_such_rule\n');
  assert.throws(
    () => Pack.load(dir),
    (err) => {
      assert.ok(err instanceof PackError);
      assert.ok(err instanceof TribunalError);
      assert.ok(err instanceof Error);
      assert.equal(err.name, 'PackError');
      assert.equal(err.file, path.join(dir, 'pack.yaml'));
      assert.equal(err.line, 5);
      assert.equal(typeof err.column, 'number');
      assert.match(err.message, /pack\.yaml:5:\d+: .*no_such_rule/);
      assert.equal(err.errors.length, 1);
      assert.deepEqual(Object.keys(err.errors[0]).sort(), ['column', 'file', 'help', 'line', 'message']);
      return true;
    },
  );
  // A folder without a pack, and an override of nothing.
  assert.throws(() => Pack.load(path.join(dir, 'missing')), PackError);
  assert.throws(() => Pack.load(KSI, { overrides: { 'no_such_step.threshold': 1 } }), (err) => {
    assert.ok(err instanceof PackError);
    assert.match(err.message, /no_such_step/);
    return true;
  });
});

test('load options are checked, each by its name', () => {
  assert.throws(() => Pack.load(KSI, { allowPlugin: true }), /unknown option `allowPlugin`/);
  assert.throws(() => Pack.load(KSI, { allowPlugins: 'yes' }), /allowPlugins must be true or false/);
  assert.throws(() => Pack.load(KSI, { pluginDirs: 'dir' }), /pluginDirs must be an array/);
  assert.throws(() => Pack.load(KSI, { overrides: [] }), /overrides must be an object/);
  assert.throws(() => Pack.load(42), TypeError);
  // An override is the CLI's --set.
  const strict = Pack.load(KSI, { overrides: { 'validate_json_emission.threshold': 0.99 } });
  assert.notEqual(strict.revision, Pack.load(KSI).revision);
});

test('a pack with a plugin needs allowPlugins', () => {
  const packPath = path.join(root, 'examples/packs/invoice-summary');
  assert.throws(() => Pack.load(packPath), (err) => err instanceof PackError && /allowPlugins|allow-plugins/.test(err.message));
});

test('bad input is an ERROR result, never an exception', async () => {
  const pack = Pack.load(KSI);
  const errorOf = (result) => {
    assert.equal(result.status, 'ERROR');
    assert.equal(result.passed, false);
    assert.equal(result.score, null);
    assert.equal(result.error_kind, 'input');
    return result.error;
  };
  assert.match(errorOf(pack.evaluate(undefined)), /no `output`/);
  assert.match(errorOf(pack.evaluate(null)), /no `output`/);
  const cyclic = { a: 1 };
  cyclic.self = cyclic;
  assert.match(errorOf(pack.evaluate(EMITTED, { meta: cyclic, id: 'c1' })), /`meta` cannot be written as JSON: .*circular/i);
  assert.equal(pack.evaluate(EMITTED, { meta: cyclic, id: 'c1' }).id, 'c1');
  assert.match(errorOf(pack.evaluate(EMITTED, { expected: 10n })), /`expected` cannot be written as JSON: .*BigInt/);
  assert.match(errorOf(await pack.evaluateAsync(EMITTED, { meta: cyclic })), /circular/i);
  // What the CLI does with a non-string output, the API does too.
  for (const output of [42, true, { event: 'agent:status' }, ['a']]) {
    const dir = tempDir();
    const data = path.join(dir, 'data.jsonl');
    fs.writeFileSync(data, `${JSON.stringify({ output })}\n`);
    const { line, ...expected } = JSON.parse(cli(['eval', KSI, '--input', data]));
    assert.deepStrictEqual(pack.evaluate(output), expected);
  }
  // A function or a symbol is no JSON value: left out, as JSON.stringify does.
  assert.match(errorOf(pack.evaluate(() => 1)), /no `output`/);
  // Huge text is judged (no line limit in the API).
  const huge = `${'x'.repeat(64 << 20)} ${EMITTED}`;
  const big = pack.evaluate(huge);
  assert.equal(big.status, 'PASS');
  // Lone surrogates read as U+FFFD, with a warning, as the CLI reads them.
  const lone = pack.evaluate(`${EMITTED} \ud800`);
  assert.equal(lone.issues[0].code, 'input.lone-surrogate');
});

test('evaluateMany: in input order, any jobs, records as objects or lines, bad ones ERROR', async () => {
  const pack = Pack.load(KSI);
  const outputs = Array.from({ length: 1000 }, (_, i) => (i % 3 ? EMITTED : `step ${i}`));
  const records = outputs.map((output, i) => ({ id: i, output }));
  const one = await pack.evaluateMany(records, { jobs: 1 });
  const two = await pack.evaluateMany(records, { jobs: 2 });
  assert.deepStrictEqual(one, two);
  assert.deepStrictEqual(one.map((r) => r.id), records.map((r) => r.id));
  assert.deepStrictEqual(one.map((r) => r.line), records.map((_, i) => i + 1));
  assert.deepStrictEqual(await pack.evaluateMany(records.map((r) => JSON.stringify(r))), one);
  // A generator is read too.
  function* generate() {
    yield* records;
  }
  assert.deepStrictEqual(await pack.evaluateMany(generate()), one);
  assert.deepStrictEqual(await pack.evaluateMany([]), []);

  const cyclic = { output: EMITTED };
  cyclic.meta = cyclic;
  const mixed = await pack.evaluateMany([
    { id: 'a', output: EMITTED },
    null,
    'not json',
    { id: 'c', ...cyclic },
    42,
    '{"id": "pretty",\n "output": "x"}',
    { id: 'e' },
  ]);
  assert.deepStrictEqual(mixed.map((r) => r.status), ['PASS', 'ERROR', 'ERROR', 'ERROR', 'ERROR', 'FAIL', 'ERROR']);
  assert.deepStrictEqual(mixed.map((r) => r.line), [1, 2, 3, 4, 5, 6, 7]);
  assert.match(mixed[1].error, /^record 2: a record must be an object .* not null$/);
  assert.match(mixed[2].error, /^line 3: not valid JSON/);
  assert.match(mixed[3].error, /^record 4: `meta` cannot be written as JSON/);
  assert.equal(mixed[3].id, 'c');
  assert.match(mixed[4].error, /not number$/);
  assert.equal(mixed[5].id, 'pretty');
  assert.match(mixed[6].error, /no `output`/);

  // Fields: only those members, as `eval --fields`.
  const slim = await pack.evaluateMany(records.slice(0, 3), { fields: ['id', 'status', 'score'] });
  assert.deepStrictEqual(slim, one.slice(0, 3).map(({ id, status, score }) => ({ id, status, score })));
  const slimError = await pack.evaluateMany([null], { fields: ['id', 'error'] });
  assert.deepStrictEqual(Object.keys(slimError[0]), ['id', 'error']);
  await assert.rejects(pack.evaluateMany(records, { fields: ['nope'] }), /nope/);
  await assert.rejects(pack.evaluateMany(records, { jobs: -1 }), TypeError);
});

test('evaluateAsync runs off the event loop and gives what evaluate gives', async () => {
  const pack = Pack.load(KSI);
  const results = await Promise.all(
    Array.from({ length: 50 }, (_, i) => pack.evaluateAsync(i % 2 ? EMITTED : 'nothing', { id: i })),
  );
  results.forEach((result, i) => assert.deepStrictEqual(result, pack.evaluate(i % 2 ? EMITTED : 'nothing', { id: i })));
});

test('a stream ends with exactly what evaluate gives, and tells violations early', () => {
  const pack = Pack.load(path.join(root, 'rules/structured-output'));
  const text = '{"name": "TODO", "tags": []}';
  const stream = pack.stream({ id: 's1', release: true });
  assert.ok(stream instanceof Stream);
  const events = [];
  for (let at = 0; at < text.length; at += 3) {
    events.push(...stream.push(text.slice(at, at + 3)));
  }
  assert.equal(stream.text, text);
  const result = stream.finish();
  assert.deepStrictEqual(result, pack.evaluate(text, { id: 's1' }));
  for (const event of events) {
    assert.ok(event.event === 'violation' || event.event === 'release');
    if (event.event === 'release') assert.equal(typeof event.up_to, 'number');
  }
  assert.throws(() => stream.push('more'), (err) => err instanceof TribunalError && /finished/.test(err.message));
  assert.throws(() => pack.stream().push(42), TypeError);
});

test('watch reads OpenAI and Anthropic SDK streams and yields events as they come', async () => {
  const pack = Pack.load(path.join(root, 'examples/packs/tool-calls'), {
    overrides: { 'tool_args.today': '2026-11-24' },
  });
  const CALL = '{"tool": "cancel_booking", "args": {"booking_id": "QX7P2K"}, "reason": "The traveller asked to cancel QX7P2K."}';
  const WRONG = '{"tool": "delete_booking", "args": {"booking_id": "QX7P2K"}, "reason": "Gone."}';
  // The shapes the SDKs stream (async iterables), with chunks that carry no
  // text (a role, the end) skipped.
  async function* openai(text) {
    yield { choices: [{ delta: { role: 'assistant', content: null } }] };
    for (let at = 0; at < text.length; at += 5) {
      yield { choices: [{ delta: { content: text.slice(at, at + 5) } }] };
    }
    yield { choices: [{ delta: {}, finish_reason: 'stop' }] };
  }
  async function* responses(text) {
    yield { type: 'response.created' };
    for (let at = 0; at < text.length; at += 6) {
      yield { type: 'response.output_text.delta', delta: text.slice(at, at + 6) };
    }
  }
  async function* anthropic(text) {
    yield { type: 'message_start', message: {} };
    for (let at = 0; at < text.length; at += 7) {
      yield { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: text.slice(at, at + 7) } };
    }
    yield { type: 'message_stop' };
  }
  for (const source of [openai, responses, anthropic]) {
    let pulled = 0;
    async function* counting(chunks) {
      for await (const chunk of chunks) {
        pulled += 1;
        yield chunk;
      }
    }
    const watched = watch(pack, counting(source(WRONG)));
    assert.ok(watched instanceof Watched);
    let violation = null;
    for await (const event of watched) {
      if (event.event === 'violation') {
        violation = event;
        break; // stop paying for tokens
      }
    }
    assert.equal(violation?.code, 'contract.kind-not-allowed', source.name);
    // The violation came long before the stream ended.
    assert.ok(pulled < WRONG.length / 5, `${source.name}: ${pulled}`);
    const text = watched.session.text;
    assert.ok(text.length < WRONG.length);
    assert.deepStrictEqual(watched.finish(), pack.evaluate(text));
    assert.deepStrictEqual(watched.result, watched.finish());
  }
  // A whole answer: no events, the result once the stream ends; plain strings
  // (sync iterables too) and options pass through.
  const whole = watch(pack, anthropic(CALL), { id: 'w1' });
  const events = [];
  for await (const event of whole) events.push(event);
  assert.deepEqual(events, []);
  assert.equal(whole.result?.status, 'PASS');
  assert.equal(whole.result?.id, 'w1');
  const strings = watch(pack, [WRONG.slice(0, 10), WRONG.slice(10)], { release: true });
  const kinds = [];
  for await (const event of strings) kinds.push(event.event);
  assert.ok(kinds.includes('violation') && kinds.includes('release'), kinds.join());
  assert.deepStrictEqual(strings.result, pack.evaluate(WRONG));
  // A custom reader, and what is refused.
  const custom = watch(pack, [{ piece: CALL }], { text: (chunk) => chunk.piece });
  for await (const _ of custom) { /* no events */ }
  assert.equal(custom.result?.status, 'PASS');
  assert.equal(chunkText({ choices: [{ delta: { tool_calls: [] } }] }), null);
  assert.equal(chunkText(42), null);
  assert.throws(() => watch(pack, 'text'), TypeError);
  assert.throws(() => watch({}, []), TypeError);
  assert.throws(() => watch(pack, [], { text: 1 }), TypeError);
  assert.throws(() => watch(pack, [], { nope: 1 }), TypeError);
});

test('a bundle loads as a pack, verified against the keys it is told to trust', () => {
  const dir = tempDir();
  const bundle = path.join(dir, 'rules.tar.gz');
  const key = path.join(dir, 'team');
  cli(['bundle', 'keygen', '-o', key]);
  cli(['bundle', 'build', KSI, path.join(root, 'rules/json-eval'), '-o', bundle]);
  const folder = Pack.load(KSI);
  assert.equal(folder.bundleRevision, null);
  assert.throws(() => Pack.load(bundle), (err) => err instanceof PackError && /name one/.test(err.message));
  const pack = Pack.load(`${bundle}#ksi-emission`);
  assert.equal(pack.revision, folder.revision);
  assert.match(pack.bundleRevision, /^[0-9a-f]{16}$/);
  assert.deepEqual(pack.evaluate(EMITTED), folder.evaluate(EMITTED));
  const trust = [`${key}.pub`];
  assert.throws(() => Pack.load(`${bundle}#ksi-emission`, { trust }), (err) => err instanceof PackError && /not signed/.test(err.message));
  cli(['bundle', 'sign', bundle, '--key', `${key}.key`]);
  assert.equal(Pack.load(`${bundle}#ksi-emission`, { trust }).name, 'ksi-emission');
  assert.throws(() => Pack.load(KSI, { trust: 'team.pub' }), /trust must be an array of paths/);
  assert.throws(() => Pack.load(KSI, { trust: [`${key}.key`] }), (err) => err instanceof PackError && /secret \(signing\) key/.test(err.message));
});
