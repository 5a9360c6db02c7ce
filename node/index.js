// @ts-check
// The npm package `tribunal`: validate and score what language models emit,
// with YAML rule packs, in process. The API mirrors the Python package's
// (docs/node.md). The engine is the compiled half, tribunal.node (src/lib.rs),
// which `npm install` builds from source; this module gives it its JavaScript
// shape: records in as JSON lines, result records out as plain objects equal
// to the lines `tribunal eval` writes.
'use strict';

const path = require('node:path');

/** @type {typeof import('./native')} */
const native = loadNative();

/**
 * The compiled engine: `tribunal.node` in this folder when the package was
 * built from source (`npm install` of a clone), else the prebuilt addon of
 * this platform's package (`tribunal-linux-x64-gnu`, installed beside this one
 * as an optional dependency, the napi-rs layout; scripts/dist builds both).
 */
function loadNative() {
  const local = path.join(__dirname, 'tribunal.node');
  const tried = [];
  // The platform's name only when needed: a process report takes a moment.
  for (const where of [() => local, platformPackage]) {
    const candidate = where();
    try {
      return require(candidate);
    } catch (err) {
      const missing = /** @type {NodeJS.ErrnoException} */ (err).code === 'MODULE_NOT_FOUND';
      tried.push(`${candidate}: ${missing ? 'not installed' : messageOf(err)}`);
    }
  }
  throw new Error(
    `tribunal: the compiled engine did not load (tried ${tried.join('; ')}).\n` +
      'A prebuilt engine comes in the platform package beside this one (scripts/dist builds it); ' +
      'from a clone, `npm install ./node` compiles it (`npm run build` in the package folder builds it again).',
  );
}

/**
 * The name of this platform's prebuilt package (`tribunal-<os>-<cpu>[-gnu|-musl]`),
 * glibc or musl told apart by the process report's glibc version.
 * @returns {string}
 */
function platformPackage() {
  let name = `tribunal-${process.platform}-${process.arch}`;
  if (process.platform === 'linux') {
    const report = /** @type {{ header?: { glibcVersionRuntime?: string } }} */ (process.report?.getReport() ?? {});
    name += report.header?.glibcVersionRuntime ? '-gnu' : '-musl';
  }
  return name;
}

/**
 * The base of every error Tribunal throws.
 */
class TribunalError extends Error {
  /**
   * @param {string} message
   */
  constructor(message) {
    super(message);
    this.name = 'TribunalError';
  }
}

/**
 * A pack did not load. The message lists every error as the CLI prints it
 * (`file:line:column: message`); `errors` holds them one by one, and `file`,
 * `line` and `column` are the first one's.
 */
class PackError extends TribunalError {
  /**
   * @param {string} message
   * @param {LoadErrorDetail[]} errors
   */
  constructor(message, errors) {
    super(message);
    this.name = 'PackError';
    /** Every load error, in the order the CLI prints them. */
    this.errors = errors;
    /** The file of the first error. */
    this.file = errors.length > 0 ? errors[0].file : null;
    /** Its line (1-based), when it has one. */
    this.line = errors.length > 0 ? errors[0].line : null;
    /** Its column (1-based), when it has one. */
    this.column = errors.length > 0 ? errors[0].column : null;
  }
}

/**
 * @typedef {object} LoadErrorDetail One error of a pack that did not load.
 * @property {string} file The file it is in.
 * @property {number | null} line Its line (1-based), when it has one.
 * @property {number | null} column Its column (1-based), when it has one.
 * @property {string} message What is wrong.
 * @property {string | null} help How to put it right, when known.
 */

/**
 * @typedef {object} LoadOptions
 * @property {Record<string, unknown>} [overrides] Component settings over the
 *   pack's own, like `{"json_emission.threshold": 0.8}` (the CLI's `--set`).
 * @property {boolean} [allowPlugins] Consent to opening the pack's plugin
 *   libraries, native code that runs with your privileges (the CLI's
 *   `--allow-plugins`): without it a pack with a plugin component does not load.
 * @property {string[]} [pluginDirs] More folders to find plugin libraries in
 *   (`--plugin-dir`).
 * @property {string[]} [allowPaths] Files or folders outside the pack that its
 *   files may resolve into (`--allow-path`).
 * @property {string[]} [trust] Verifying keys' files (`NAME.pub` of `tribunal
 *   bundle keygen`): a bundle must be signed by one of them (`--trust`).
 * @property {string} [cacheDir] Keep SEMANTIC embeddings in this folder across
 *   runs (`--cache-dir`); without it they are kept in memory only.
 */

/**
 * @typedef {object} EvaluateOptions The record's other members, as in an
 *   `eval` input line.
 * @property {unknown} [expected] The ground truth, for the steps that compare.
 * @property {unknown} [meta] Anything else the components may read.
 * @property {unknown} [id] The record's id, echoed in its result.
 * @property {unknown[]} [messages] An agent's transcript (OpenAI Chat,
 *   Anthropic Messages or OpenAI Responses messages), judged with the output,
 *   or instead of it when `output` is `undefined`.
 */

/**
 * @typedef {object} DecideOptions The record's other members, for `decide`.
 * @property {unknown} [expected] The ground truth, for the steps that compare.
 * @property {unknown} [meta] Anything else the components may read.
 * @property {unknown} [id] The record's id, echoed in the decisions.
 */

/**
 * @typedef {object} CallDecision The decision on one proposed tool call.
 * @property {number} call Its place among the calls proposed (from 0).
 * @property {string} id The call's id (empty when it has none).
 * @property {string} name The tool it calls.
 * @property {string} path JSON pointer of the call in the record.
 * @property {'allow' | 'deny'} decision Whether it may run.
 * @property {Issue[]} issues The issues about it: its errors deny it.
 */

/**
 * @typedef {object} Decisions The decisions on a transcript's proposed tool
 *   calls, one per call, in order.
 * @property {unknown} id The record's id.
 * @property {CallDecision[]} decisions One per proposed call.
 * @property {Issue[]} history Issues of the conversation before the
 *   proposal (its earlier turns and calls): reported apart, they deny no call.
 * @property {Issue[]} other_issues Issues about no one call (they decide nothing).
 * @property {string | null} error Why the proposal could not be judged
 *   (every call denied), or why there is nothing to decide.
 * @property {string | null} error_kind What kind of failure `error` was.
 * @property {string} pack `name@version` of the pack.
 * @property {string} revision Content revision of the pack.
 */

/**
 * @typedef {object} EvaluateManyOptions
 * @property {number} [jobs] Threads (0 or absent: every core).
 * @property {string[]} [fields] Only these members of each result record
 *   (the CLI's `--fields`): reading fewer makes results faster to build.
 */

/**
 * @typedef {object} Issue One problem a step found.
 * @property {string} rule The step (or `scoring`, `input`, `extraction`).
 * @property {string} code A stable code, like `emission.described-not-emitted`.
 * @property {'error' | 'warning' | 'info'} severity
 * @property {string} message
 * @property {string | null} path A JSON Pointer into the output's JSON, when
 *   the issue is about one value (into the record, `/messages/3/tool_calls/0`,
 *   for an issue about a transcript's message).
 * @property {number} [turn] The index in the record's `turns` of the turn the
 *   issue is about, when it is about one.
 */

/**
 * @typedef {object} TurnResult One turn of a transcript record's result.
 * @property {'system' | 'user' | 'assistant' | 'tool'} role Who wrote it.
 * @property {string} path A JSON Pointer to its message in the record.
 * @property {'PASS' | 'NEEDS_IMPROVEMENT' | 'FAIL'} status Its verdict, by the
 *   pack's scoring over its own issues and score.
 * @property {number | null} score The weighted score of the metrics run on it
 *   (`scope: assistant_turns` or `last`); `null` when none ran on it.
 * @property {Issue[]} issues The record's issues about this turn.
 */

/**
 * @typedef {object} MetricResult
 * @property {number | null} score In [0, 1]; `null` when the metric was skipped.
 * @property {number} weight
 * @property {Record<string, unknown>} [details]
 * @property {string} [skipped] Why it did not apply.
 */

/**
 * @typedef {object} ResultRecord A result record, as `tribunal eval` writes it
 *   (docs/DESIGN's result record): every member unless `fields` chose some.
 * @property {unknown} id The record's id (`null` when it has none).
 * @property {number} [line] The record's position (from 1) in `evaluateMany`.
 * @property {'PASS' | 'NEEDS_IMPROVEMENT' | 'FAIL' | 'ERROR'} status
 * @property {boolean} passed Whether the status is `PASS`.
 * @property {number | null} score The weighted score in [0, 1] (`null` for ERROR).
 * @property {Record<string, MetricResult>} metrics Each metric, by name.
 * @property {Issue[]} issues
 * @property {{tier: string | null, repairs: string[], raw_fallback: boolean, schema_repairs?: {repair: string, path: string}[]}} extraction
 *   How the JSON was found in the output (`schema_repairs`: what a contract's
 *   `repair: schema` changed, each at its path, when it changed something).
 * @property {unknown} json The JSON extracted from the output, or `null`.
 * @property {string | null} feedback A retry prompt built from the issues.
 * @property {string | null} error Why the record could not be evaluated (ERROR).
 * @property {string | null} error_kind `input`, `timeout`, `internal`...
 * @property {string} pack `name@version`.
 * @property {string} revision The pack's content revision.
 * @property {TurnResult[]} [turns] A transcript record's turns, in order
 *   (absent for a record without `messages`).
 */

/**
 * @typedef {object} StreamViolation An issue that was certain before the
 *   output ended.
 * @property {'violation'} event
 * @property {string} rule
 * @property {string} code
 * @property {'error' | 'warning' | 'info'} severity
 * @property {string} message
 * @property {string | null} path
 * @property {number} start The byte offset (UTF-8) where the offending text starts.
 * @property {number} offset The byte offset where it became certain.
 */

/**
 * @typedef {object} StreamRelease Bytes up to `up_to` are safe to pass on.
 * @property {'release'} event
 * @property {number} up_to A byte offset (UTF-8).
 */

/** @typedef {StreamViolation | StreamRelease} StreamEvent */

/**
 * @typedef {object} StreamOptions
 * @property {unknown} [expected]
 * @property {unknown} [meta]
 * @property {unknown} [id]
 * @property {boolean} [release] Also report how far the text is safe to pass on.
 */

/**
 * @typedef {object} WatchOptions `watch`'s options: the stream's, and how to
 * read a chunk's text.
 * @property {unknown} [expected]
 * @property {unknown} [meta]
 * @property {unknown} [id]
 * @property {boolean} [release] Also report how far the text is safe to pass on.
 * @property {(chunk: any) => string | null | undefined} [text] Reads one
 * chunk's text (default: `chunkText`).
 */

/**
 * A record as a line of JSON, or why it cannot be one (a cycle, a BigInt, a
 * string past V8's limit).
 * @param {Record<string, unknown>} record
 * @returns {{line: string} | {failed: string, id: string | null}}
 */
function recordLine(record) {
  try {
    return { line: JSON.stringify(record) };
  } catch (err) {
    // V8's message on a cycle goes on to draw it, over several lines.
    const reason = messageOf(err).split('\n')[0].trim();
    let failed = `the record cannot be written as JSON: ${reason}`;
    for (const [name, value] of Object.entries(record)) {
      try {
        JSON.stringify(value);
      } catch {
        failed = `\`${name}\` cannot be written as JSON: ${reason}`;
        break;
      }
    }
    let id = null;
    try {
      id = record.id === undefined ? null : (JSON.stringify(record.id) ?? null);
    } catch {
      // An id that cannot be written: the result's is null.
    }
    return { failed, id };
  }
}

/**
 * The members of an `evaluate` call as a record.
 * @param {unknown} output
 * @param {EvaluateOptions} options
 */
function memberRecord(output, options) {
  const { expected, meta, id, messages } = options ?? {};
  return { id, output, expected, meta, messages };
}

/**
 * A record of `evaluateMany` as a line: objects are written as JSON, strings
 * are taken as lines of JSONL already (as `tribunal eval` reads them).
 * @param {unknown} record
 * @param {number} index
 * @returns {{line: string} | {failed: string, id: string | null}}
 */
function manyLine(record, index) {
  if (typeof record === 'string') {
    // A line break inside a JSON text is whitespace, or an error where it
    // stands: a space in its place keeps the line one line and every column.
    return { line: /[\r\n]/.test(record) ? record.replace(/[\r\n]/g, ' ') : record };
  }
  if (record === null || typeof record !== 'object' || Array.isArray(record)) {
    const kind = record === null ? 'null' : Array.isArray(record) ? 'an array' : typeof record;
    return {
      failed: `record ${index + 1}: a record must be an object (with \`output\`, and optionally \`id\`, \`expected\`, \`meta\` and \`messages\`) or a line of JSON, not ${kind}`,
      id: null,
    };
  }
  const written = recordLine(/** @type {Record<string, unknown>} */ (record));
  if ('failed' in written) {
    return { failed: `record ${index + 1}: ${written.failed}`, id: written.id };
  }
  return written;
}

/**
 * A compiled rule pack: load once, evaluate any number of outputs.
 */
class Pack {
  /**
   * Use `Pack.load`.
   * @private
   * @param {import('./native').ExternalObject<'NativePack'>} inner
   * @param {string} packPath
   */
  constructor(inner, packPath) {
    /** @private */
    this.inner = inner;
    /** @private */
    this.info = JSON.parse(native.info(inner));
    /** The path the pack was loaded from, as given. */
    this.path = packPath;
  }

  /**
   * Loads and compiles the pack at `path` (a folder with `pack.yaml`, the
   * file itself, or a bundle of `tribunal bundle build`: `FILE`, or
   * `FILE#NAME` for one of its packs; `options.trust` names the keys one of
   * which must have signed it). Throws a `PackError` naming file, line and
   * column when it does not load.
   * @param {string} packPath
   * @param {LoadOptions} [options]
   * @returns {Pack}
   */
  static load(packPath, options = {}) {
    if (typeof packPath !== 'string') {
      throw new TypeError(`Pack.load: path must be a string, not ${describe(packPath)}`);
    }
    const settings = checkLoadOptions(options);
    const loaded = native.load(packPath, JSON.stringify(settings));
    if (typeof loaded === 'string') {
      const failure = JSON.parse(loaded);
      throw new PackError(failure.message, failure.errors);
    }
    return new Pack(loaded, packPath);
  }

  /**
   * The pack's name.
   * @returns {string}
   */
  get name() {
    return this.info.name;
  }

  /**
   * The pack's version.
   * @returns {string}
   */
  get version() {
    return this.info.version;
  }

  /**
   * `name@version`, as in each result's `pack`.
   * @returns {string}
   */
  get label() {
    return this.info.label;
  }

  /**
   * The content revision (a hash of the pack's files and the overrides).
   * @returns {string}
   */
  get revision() {
    return this.info.revision;
  }

  /**
   * The revision of the bundle the pack was loaded from, or `null` (a folder).
   * @returns {string | null}
   */
  get bundleRevision() {
    return this.info.bundleRevision;
  }

  /**
   * The pack's description, or `null`.
   * @returns {string | null}
   */
  get description() {
    return this.info.description;
  }

  /**
   * The metrics, in pipeline order.
   * @returns {string[]}
   */
  get metrics() {
    return [...this.info.metrics];
  }

  /**
   * Warnings found while loading (as `tribunal lint` prints them).
   * @returns {string[]}
   */
  get warnings() {
    return [...this.info.warnings];
  }

  /**
   * The OUTPUT FORMAT block for the pack's contract (`tribunal prompt`), or
   * `null` when the pack has no contract.
   * @returns {string | null}
   */
  prompt() {
    return native.prompt(this.inner) ?? null;
  }

  /**
   * The contract as a JSON Schema (`tribunal prompt --schema`), or `null`
   * when the pack has no contract. `strict: true`: the subset OpenAI's
   * Structured Outputs take (`--schema --strict`); it throws a
   * `TribunalError` saying what that subset cannot express.
   * @param {{strict?: boolean}} [options]
   * @returns {Record<string, unknown> | null}
   */
  jsonSchema(options = {}) {
    const schema = engine(() => native.jsonSchema(this.inner, Boolean(options.strict)));
    return schema == null ? null : JSON.parse(schema);
  }

  /**
   * Evaluates one output, on the calling thread. Never throws for what it is
   * given: a record that cannot be evaluated (no output, a cyclic `meta`) is
   * an `ERROR` result saying why.
   * @param {unknown} output The model's output (a string).
   * @param {EvaluateOptions} [options]
   * @returns {ResultRecord}
   */
  evaluate(output, options = {}) {
    const written = recordLine(memberRecord(output, options));
    if ('failed' in written) {
      return JSON.parse(native.errored(this.inner, written.id, written.failed));
    }
    return JSON.parse(native.evaluate(this.inner, written.line));
  }

  /**
   * Decides, before they run, the tool calls the last assistant message of
   * `messages` (OpenAI Chat, Anthropic Messages or OpenAI Responses) proposes:
   * `allow` or `deny` for each, with the issues that decide it, as
   * `tribunal check --proposed --json` prints them. Fails closed: a proposal
   * that cannot be judged denies every call; messages that propose no call
   * give no decision and an `error`.
   * @param {unknown[]} messages The transcript, its last message proposing the calls.
   * @param {DecideOptions} [options]
   * @returns {Decisions}
   */
  decide(messages, options = {}) {
    if (!Array.isArray(messages)) {
      throw new TypeError('decide(messages): messages must be an array of messages');
    }
    const { expected, meta, id } = options ?? {};
    const written = recordLine({ id, output: null, expected, meta, messages });
    if ('failed' in written) {
      throw new TypeError(`decide(messages): ${written.failed}`);
    }
    return JSON.parse(engine(() => native.decide(this.inner, written.line)));
  }

  /**
   * `evaluate` off the event loop (on libuv's thread pool).
   * @param {unknown} output
   * @param {EvaluateOptions} [options]
   * @returns {Promise<ResultRecord>}
   */
  async evaluateAsync(output, options = {}) {
    const written = recordLine(memberRecord(output, options));
    if ('failed' in written) {
      return JSON.parse(native.errored(this.inner, written.id, written.failed));
    }
    return JSON.parse(await native.evaluateAsync(this.inner, written.line));
  }

  /**
   * Evaluates every record, on `jobs` threads off the event loop, and
   * resolves to their results in input order, each `line` its position from
   * 1: what `tribunal eval` writes for the same records. A record is an
   * object with the members of an `eval` input line (`id`, `output`,
   * `expected`, `meta`, `messages`), or a string that is such a line. A record
   * that cannot be evaluated is an `ERROR` result, never a rejection.
   * @param {Iterable<unknown>} records
   * @param {EvaluateManyOptions} [options]
   * @returns {Promise<ResultRecord[]>}
   */
  async evaluateMany(records, options = {}) {
    const { jobs = 0, fields } = options;
    if (!Number.isInteger(jobs) || jobs < 0) {
      throw new TypeError(`evaluateMany: jobs must be a whole number of threads (0: every core), not ${describe(jobs)}`);
    }
    if (fields !== undefined && !(Array.isArray(fields) && fields.every((f) => typeof f === 'string'))) {
      throw new TypeError(`evaluateMany: fields must be an array of result record member names, not ${describe(fields)}`);
    }
    /** @type {string[]} */
    const lines = [];
    /** @type {Map<number, {failed: string, id: string | null}>} */
    const failed = new Map();
    let index = 0;
    for (const record of records) {
      const written = manyLine(record, index);
      if ('failed' in written) {
        failed.set(index, written);
        // Its place kept; its result is made below.
        lines.push('null');
      } else {
        lines.push(written.line);
      }
      index += 1;
    }
    if (lines.length === 0) return [];
    const results = JSON.parse(
      await engine(() => native.evaluateMany(this.inner, lines.join('\n'), jobs, (fields ?? []).join(','))),
    );
    for (const [at, { failed: reason, id }] of failed) {
      const full = JSON.parse(native.errored(this.inner, id, reason));
      const result = { ...results[at] };
      for (const key of Object.keys(result)) {
        if (key in full) result[key] = full[key];
      }
      results[at] = result;
    }
    return results;
  }

  /**
   * A streaming session for one output: `push(chunk)` returns the events the
   * chunk made certain, `finish()` the result record (exactly `evaluate` of
   * the whole text).
   * @param {StreamOptions} [options]
   * @returns {Stream}
   */
  stream(options = {}) {
    const { expected, meta, id, release = false } = options;
    const written = recordLine({ id, output: '', expected, meta });
    if ('failed' in written) {
      throw new TribunalError(written.failed);
    }
    return streamOf(engine(() => native.stream(this.inner, written.line, Boolean(release))));
  }
}

/**
 * A streaming session (see `Pack.stream`).
 */
class Stream {
  /**
   * Use `pack.stream()`.
   * @private
   * @param {import('./native').ExternalObject<'NativeStream'>} inner
   */
  constructor(inner) {
    /** @private */
    this.inner = inner;
  }

  /**
   * Appends `chunk` to the output; returns the events it made certain.
   * @param {string} chunk
   * @returns {StreamEvent[]}
   */
  push(chunk) {
    if (typeof chunk !== 'string') {
      throw new TypeError(`push: a chunk must be a string, not ${describe(chunk)}`);
    }
    return JSON.parse(engine(() => native.streamPush(this.inner, chunk)));
  }

  /**
   * Ends the output and returns its result record.
   * @returns {ResultRecord}
   */
  finish() {
    return JSON.parse(engine(() => native.streamFinish(this.inner)));
  }

  /** The text pushed so far. */
  get text() {
    return engine(() => native.streamText(this.inner));
  }

}

/**
 * The text of one streamed chunk: a string; an OpenAI Chat Completions chunk
 * (`choices[0].delta.content`); an OpenAI Responses event (`delta` of a
 * `response.output_text.delta`); an Anthropic `content_block_delta`
 * (`delta.text`). `null` for chunks that carry no text (a role, a tool call,
 * the end).
 * @param {any} chunk
 * @returns {string | null}
 */
function chunkText(chunk) {
  if (typeof chunk === 'string') return chunk;
  if (chunk === null || typeof chunk !== 'object') return null;
  if (Array.isArray(chunk.choices)) {
    const content = chunk.choices[0]?.delta?.content;
    return typeof content === 'string' ? content : null;
  }
  const { type, delta } = chunk;
  if (type === 'response.output_text.delta' && typeof delta === 'string') return delta;
  if (delta !== null && typeof delta === 'object' && typeof delta.text === 'string') return delta.text;
  return null;
}

/**
 * The events of a streamed output (see `watch`): iterate over it with
 * `for await`; `finish()` (or the end of the iteration) gives the result
 * record, also in `result`.
 */
class Watched {
  /**
   * Use `watch(pack, chunks)`.
   * @private
   * @param {Stream} session
   * @param {AsyncIterable<any> | Iterable<any>} chunks
   * @param {(chunk: any) => string | null | undefined} text
   */
  constructor(session, chunks, text) {
    /** The engine's session. */
    this.session = session;
    /** @private */
    this.chunks = chunks;
    /** @private */
    this.text = text;
    /** @type {ResultRecord | null} The result, once finished. */
    this.result = null;
  }

  /**
   * The events as the chunks come. Leaving the loop early (`break`) stops
   * reading the chunks: an SDK stream then ends its request.
   * @returns {AsyncGenerator<StreamEvent, void, undefined>}
   */
  async *[Symbol.asyncIterator]() {
    for await (const chunk of this.chunks) {
      const piece = this.text(chunk);
      if (typeof piece === 'string' && piece !== '') {
        yield* this.session.push(piece);
      }
    }
    this.finish();
  }

  /**
   * The result record of the text pushed so far (the whole output once the
   * iteration ended).
   * @returns {ResultRecord}
   */
  finish() {
    if (this.result === null) this.result = this.session.finish();
    return this.result;
  }
}

/**
 * Streams `chunks` (strings, or the events the OpenAI and Anthropic SDKs
 * stream, read with `options.text`) through a session of `pack`; iterate over
 * the answer with `for await` for the events.
 * @param {Pack} pack
 * @param {AsyncIterable<any> | Iterable<any>} chunks
 * @param {WatchOptions} [options]
 * @returns {Watched}
 */
function watch(pack, chunks, options = {}) {
  if (!(pack instanceof Pack)) {
    throw new TypeError(`watch: the first argument must be a Pack, not ${describe(pack)}`);
  }
  if (chunks === null || typeof chunks !== 'object' || !(Symbol.asyncIterator in chunks || Symbol.iterator in chunks)) {
    throw new TypeError(`watch: chunks must be an iterable or an async iterable (an SDK stream), not ${describe(chunks)}`);
  }
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`watch: options must be an object, not ${describe(options)}`);
  }
  const known = ['expected', 'meta', 'id', 'release', 'text'];
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw new TypeError(`watch: unknown option \`${key}\` (options are ${known.join(', ')})`);
    }
  }
  const { text = chunkText, ...streamOptions } = options;
  if (typeof text !== 'function') {
    throw new TypeError(`watch: text must be a function of a chunk, not ${describe(text)}`);
  }
  const Private = /** @type {new (session: Stream, chunks: AsyncIterable<any> | Iterable<any>, text: (chunk: any) => string | null | undefined) => Watched} */ (/** @type {unknown} */ (Watched));
  return new Private(pack.stream(streamOptions), chunks, text);
}

/**
 * The message of a thrown value.
 * @param {unknown} err
 */
function messageOf(err) {
  return err instanceof Error ? err.message : String(err);
}

/**
 * `f()`, the engine's errors thrown (or, for a promise, rejected) as
 * `TribunalError`s.
 * @template T
 * @param {() => T} f
 * @returns {T}
 */
function engine(f) {
  let result;
  try {
    result = f();
  } catch (err) {
    throw new TribunalError(messageOf(err));
  }
  if (result instanceof Promise) {
    return /** @type {T} */ (
      result.catch((err) => {
        throw new TribunalError(messageOf(err));
      })
    );
  }
  return result;
}

/**
 * A `Stream` over the engine's session (its constructor is private).
 * @param {import('./native').ExternalObject<'NativeStream'>} inner
 * @returns {Stream}
 */
function streamOf(inner) {
  const Private = /** @type {new (inner: import('./native').ExternalObject<'NativeStream'>) => Stream} */ (/** @type {unknown} */ (Stream));
  return new Private(inner);
}

/**
 * `Pack.load`'s options, checked, as the native loader reads them.
 * @param {LoadOptions} options
 */
function checkLoadOptions(options) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`Pack.load: options must be an object, not ${describe(options)}`);
  }
  const known = ['overrides', 'allowPlugins', 'pluginDirs', 'allowPaths', 'trust', 'cacheDir'];
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw new TypeError(`Pack.load: unknown option \`${key}\` (options are ${known.join(', ')})`);
    }
  }
  const { overrides = {}, allowPlugins = false, pluginDirs = [], allowPaths = [], trust = [], cacheDir } = options;
  if (overrides === null || typeof overrides !== 'object' || Array.isArray(overrides)) {
    throw new TypeError(`Pack.load: overrides must be an object like {"json_emission.threshold": 0.8}, not ${describe(overrides)}`);
  }
  if (typeof allowPlugins !== 'boolean') {
    throw new TypeError(`Pack.load: allowPlugins must be true or false, not ${describe(allowPlugins)}`);
  }
  for (const [name, list] of /** @type {const} */ ([['pluginDirs', pluginDirs], ['allowPaths', allowPaths], ['trust', trust]])) {
    if (!Array.isArray(list) || !list.every((p) => typeof p === 'string')) {
      throw new TypeError(`Pack.load: ${name} must be an array of paths, not ${describe(list)}`);
    }
  }
  if (cacheDir !== undefined && typeof cacheDir !== 'string') {
    throw new TypeError(`Pack.load: cacheDir must be a path, not ${describe(cacheDir)}`);
  }
  let written;
  try {
    written = JSON.parse(JSON.stringify(overrides));
  } catch (err) {
    throw new TypeError(`Pack.load: overrides cannot be written as JSON: ${messageOf(err)}`);
  }
  return { overrides: written, allowPlugins, pluginDirs, allowPaths, trust, cacheDir };
}

/**
 * What a value is, for messages.
 * @param {unknown} value
 */
function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}

module.exports = { Pack, Stream, Watched, TribunalError, PackError, watch, chunkText };
