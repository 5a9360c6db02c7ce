/**
 * One error of a pack that did not load.
 */
export type LoadErrorDetail = {
    /**
     * The file it is in.
     */
    file: string;
    /**
     * Its line (1-based), when it has one.
     */
    line: number | null;
    /**
     * Its column (1-based), when it has one.
     */
    column: number | null;
    /**
     * What is wrong.
     */
    message: string;
    /**
     * How to put it right, when known.
     */
    help: string | null;
};
export type LoadOptions = {
    /**
     * Component settings over the
     * pack's own, like `{"json_emission.threshold": 0.8}` (the CLI's `--set`).
     */
    overrides?: Record<string, unknown> | undefined;
    /**
     * Consent to opening the pack's plugin
     * libraries, native code that runs with your privileges (the CLI's
     * `--allow-plugins`): without it a pack with a plugin component does not load.
     */
    allowPlugins?: boolean | undefined;
    /**
     * More folders to find plugin libraries in
     * (`--plugin-dir`).
     */
    pluginDirs?: string[] | undefined;
    /**
     * Files or folders outside the pack that its
     * files may resolve into (`--allow-path`).
     */
    allowPaths?: string[] | undefined;
    /**
     * Verifying keys' files (`NAME.pub` of `tribunal
     * bundle keygen`): a bundle must be signed by one of them (`--trust`).
     */
    trust?: string[] | undefined;
    /**
     * Keep SEMANTIC embeddings in this folder across
     * runs (`--cache-dir`); without it they are kept in memory only.
     */
    cacheDir?: string | undefined;
};
/**
 * The record's other members, as in an
 *   `eval` input line.
 */
export type EvaluateOptions = {
    /**
     * The ground truth, for the steps that compare.
     */
    expected?: unknown;
    /**
     * Anything else the components may read.
     */
    meta?: unknown;
    /**
     * The record's id, echoed in its result.
     */
    id?: unknown;
    /**
     * An agent's transcript (OpenAI Chat,
     * Anthropic Messages or OpenAI Responses messages), judged with the output,
     * or instead of it when `output` is `undefined`.
     */
    messages?: unknown[] | undefined;
};
/**
 * The record's other members, for `decide`.
 */
export type DecideOptions = {
    /**
     * The ground truth, for the steps that compare.
     */
    expected?: unknown;
    /**
     * Anything else the components may read.
     */
    meta?: unknown;
    /**
     * The record's id, echoed in the decisions.
     */
    id?: unknown;
};
/**
 * The decision on one proposed tool call.
 */
export type CallDecision = {
    /**
     * Its place among the calls proposed (from 0).
     */
    call: number;
    /**
     * The call's id (empty when it has none).
     */
    id: string;
    /**
     * The tool it calls.
     */
    name: string;
    /**
     * JSON pointer of the call in the record.
     */
    path: string;
    /**
     * Whether it may run.
     */
    decision: "allow" | "deny";
    /**
     * The issues about it: its errors deny it.
     */
    issues: Issue[];
};
/**
 * The decisions on a transcript's proposed tool
 *   calls, one per call, in order.
 */
export type Decisions = {
    /**
     * The record's id.
     */
    id: unknown;
    /**
     * One per proposed call.
     */
    decisions: CallDecision[];
    /**
     * Issues of the conversation before the
     * proposal (its earlier turns and calls): reported apart, they deny no call.
     */
    history: Issue[];
    /**
     * Issues about no one call (they decide nothing).
     */
    other_issues: Issue[];
    /**
     * Why the proposal could not be judged
     * (every call denied), or why there is nothing to decide.
     */
    error: string | null;
    /**
     * What kind of failure `error` was.
     */
    error_kind: string | null;
    /**
     * `name@version` of the pack.
     */
    pack: string;
    /**
     * Content revision of the pack.
     */
    revision: string;
};
export type EvaluateManyOptions = {
    /**
     * Threads (0 or absent: every core).
     */
    jobs?: number | undefined;
    /**
     * Only these members of each result record
     * (the CLI's `--fields`): reading fewer makes results faster to build.
     */
    fields?: string[] | undefined;
};
/**
 * One problem a step found.
 */
export type Issue = {
    /**
     * The step (or `scoring`, `input`, `extraction`).
     */
    rule: string;
    /**
     * A stable code, like `emission.described-not-emitted`.
     */
    code: string;
    severity: "error" | "warning" | "info";
    message: string;
    /**
     * A JSON Pointer into the output's JSON, when
     * the issue is about one value (into the record, `/messages/3/tool_calls/0`,
     * for an issue about a transcript's message).
     */
    path: string | null;
    /**
     * The index in the record's `turns` of the turn the
     * issue is about, when it is about one.
     */
    turn?: number | undefined;
};
/**
 * One turn of a transcript record's result.
 */
export type TurnResult = {
    /**
     * Who wrote it.
     */
    role: "system" | "user" | "assistant" | "tool";
    /**
     * A JSON Pointer to its message in the record.
     */
    path: string;
    /**
     * Its verdict, by the
     * pack's scoring over its own issues and score.
     */
    status: "PASS" | "NEEDS_IMPROVEMENT" | "FAIL";
    /**
     * The weighted score of the metrics run on it
     * (`scope: assistant_turns` or `last`); `null` when none ran on it.
     */
    score: number | null;
    /**
     * The record's issues about this turn.
     */
    issues: Issue[];
};
export type MetricResult = {
    /**
     * In [0, 1]; `null` when the metric was skipped.
     */
    score: number | null;
    weight: number;
    details?: Record<string, unknown> | undefined;
    /**
     * Why it did not apply.
     */
    skipped?: string | undefined;
};
/**
 * A result record, as `tribunal eval` writes it
 *   (docs/DESIGN's result record): every member unless `fields` chose some.
 */
export type ResultRecord = {
    /**
     * The record's id (`null` when it has none).
     */
    id: unknown;
    /**
     * The record's position (from 1) in `evaluateMany`.
     */
    line?: number | undefined;
    status: "PASS" | "NEEDS_IMPROVEMENT" | "FAIL" | "ERROR";
    /**
     * Whether the status is `PASS`.
     */
    passed: boolean;
    /**
     * The weighted score in [0, 1] (`null` for ERROR).
     */
    score: number | null;
    /**
     * Each metric, by name.
     */
    metrics: Record<string, MetricResult>;
    issues: Issue[];
    /**
     *   How the JSON was found in the output (`schema_repairs`: what a contract's
     *   `repair: schema` changed, each at its path, when it changed something).
     */
    extraction: {
        tier: string | null;
        repairs: string[];
        raw_fallback: boolean;
        schema_repairs?: {
            repair: string;
            path: string;
        }[];
    };
    /**
     * The JSON extracted from the output, or `null`.
     */
    json: unknown;
    /**
     * A retry prompt built from the issues.
     */
    feedback: string | null;
    /**
     * Why the record could not be evaluated (ERROR).
     */
    error: string | null;
    /**
     * `input`, `timeout`, `internal`...
     */
    error_kind: string | null;
    /**
     * `name@version`.
     */
    pack: string;
    /**
     * The pack's content revision.
     */
    revision: string;
    /**
     * A transcript record's turns, in order
     * (absent for a record without `messages`).
     */
    turns?: TurnResult[] | undefined;
};
/**
 * An issue that was certain before the
 *   output ended.
 */
export type StreamViolation = {
    event: "violation";
    rule: string;
    code: string;
    severity: "error" | "warning" | "info";
    message: string;
    path: string | null;
    /**
     * The byte offset (UTF-8) where the offending text starts.
     */
    start: number;
    /**
     * The byte offset where it became certain.
     */
    offset: number;
};
/**
 * Bytes up to `up_to` are safe to pass on.
 */
export type StreamRelease = {
    event: "release";
    /**
     * A byte offset (UTF-8).
     */
    up_to: number;
};
export type StreamEvent = StreamViolation | StreamRelease;
export type StreamOptions = {
    expected?: unknown;
    meta?: unknown;
    id?: unknown;
    /**
     * Also report how far the text is safe to pass on.
     */
    release?: boolean | undefined;
};
/**
 * `watch`'s options: the stream's, and how to
 * read a chunk's text.
 */
export type WatchOptions = {
    expected?: unknown;
    meta?: unknown;
    id?: unknown;
    /**
     * Also report how far the text is safe to pass on.
     */
    release?: boolean | undefined;
    /**
     * Reads one
     * chunk's text (default: `chunkText`).
     */
    text?: ((chunk: any) => string | null | undefined) | undefined;
};
/**
 * A compiled rule pack: load once, evaluate any number of outputs.
 */
export class Pack {
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
    static load(packPath: string, options?: LoadOptions): Pack;
    /**
     * Use `Pack.load`.
     * @private
     * @param {import('./native').ExternalObject<'NativePack'>} inner
     * @param {string} packPath
     */
    private constructor();
    /** @private */
    private inner;
    /** @private */
    private info;
    /** The path the pack was loaded from, as given. */
    path: string;
    /**
     * The pack's name.
     * @returns {string}
     */
    get name(): string;
    /**
     * The pack's version.
     * @returns {string}
     */
    get version(): string;
    /**
     * `name@version`, as in each result's `pack`.
     * @returns {string}
     */
    get label(): string;
    /**
     * The content revision (a hash of the pack's files and the overrides).
     * @returns {string}
     */
    get revision(): string;
    /**
     * The revision of the bundle the pack was loaded from, or `null` (a folder).
     * @returns {string | null}
     */
    get bundleRevision(): string | null;
    /**
     * The pack's description, or `null`.
     * @returns {string | null}
     */
    get description(): string | null;
    /**
     * The metrics, in pipeline order.
     * @returns {string[]}
     */
    get metrics(): string[];
    /**
     * Warnings found while loading (as `tribunal lint` prints them).
     * @returns {string[]}
     */
    get warnings(): string[];
    /**
     * The OUTPUT FORMAT block for the pack's contract (`tribunal prompt`), or
     * `null` when the pack has no contract.
     * @returns {string | null}
     */
    prompt(): string | null;
    /**
     * The contract as a JSON Schema (`tribunal prompt --schema`), or `null`
     * when the pack has no contract. `strict: true`: the subset OpenAI's
     * Structured Outputs take (`--schema --strict`); it throws a
     * `TribunalError` saying what that subset cannot express.
     * @param {{strict?: boolean}} [options]
     * @returns {Record<string, unknown> | null}
     */
    jsonSchema(options?: {
        strict?: boolean;
    }): Record<string, unknown> | null;
    /**
     * Evaluates one output, on the calling thread. Never throws for what it is
     * given: a record that cannot be evaluated (no output, a cyclic `meta`) is
     * an `ERROR` result saying why.
     * @param {unknown} output The model's output (a string).
     * @param {EvaluateOptions} [options]
     * @returns {ResultRecord}
     */
    evaluate(output: unknown, options?: EvaluateOptions): ResultRecord;
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
    decide(messages: unknown[], options?: DecideOptions): Decisions;
    /**
     * `evaluate` off the event loop (on libuv's thread pool).
     * @param {unknown} output
     * @param {EvaluateOptions} [options]
     * @returns {Promise<ResultRecord>}
     */
    evaluateAsync(output: unknown, options?: EvaluateOptions): Promise<ResultRecord>;
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
    evaluateMany(records: Iterable<unknown>, options?: EvaluateManyOptions): Promise<ResultRecord[]>;
    /**
     * A streaming session for one output: `push(chunk)` returns the events the
     * chunk made certain, `finish()` the result record (exactly `evaluate` of
     * the whole text).
     * @param {StreamOptions} [options]
     * @returns {Stream}
     */
    stream(options?: StreamOptions): Stream;
}
/**
 * A streaming session (see `Pack.stream`).
 */
export class Stream {
    /**
     * Use `pack.stream()`.
     * @private
     * @param {import('./native').ExternalObject<'NativeStream'>} inner
     */
    private constructor();
    /** @private */
    private inner;
    /**
     * Appends `chunk` to the output; returns the events it made certain.
     * @param {string} chunk
     * @returns {StreamEvent[]}
     */
    push(chunk: string): StreamEvent[];
    /**
     * Ends the output and returns its result record.
     * @returns {ResultRecord}
     */
    finish(): ResultRecord;
    /** The text pushed so far. */
    get text(): string;
}
/**
 * The events of a streamed output (see `watch`): iterate over it with
 * `for await`; `finish()` (or the end of the iteration) gives the result
 * record, also in `result`.
 */
export class Watched {
    /**
     * Use `watch(pack, chunks)`.
     * @private
     * @param {Stream} session
     * @param {AsyncIterable<any> | Iterable<any>} chunks
     * @param {(chunk: any) => string | null | undefined} text
     */
    private constructor();
    /** The engine's session. */
    session: Stream;
    /** @private */
    private chunks;
    /** @private */
    private text;
    /** @type {ResultRecord | null} The result, once finished. */
    result: ResultRecord | null;
    /**
     * The result record of the text pushed so far (the whole output once the
     * iteration ended).
     * @returns {ResultRecord}
     */
    finish(): ResultRecord;
    /**
     * The events as the chunks come. Leaving the loop early (`break`) stops
     * reading the chunks: an SDK stream then ends its request.
     * @returns {AsyncGenerator<StreamEvent, void, undefined>}
     */
    [Symbol.asyncIterator](): AsyncGenerator<StreamEvent, void, undefined>;
}
/**
 * The base of every error Tribunal throws.
 */
export class TribunalError extends Error {
    /**
     * @param {string} message
     */
    constructor(message: string);
}
/**
 * A pack did not load. The message lists every error as the CLI prints it
 * (`file:line:column: message`); `errors` holds them one by one, and `file`,
 * `line` and `column` are the first one's.
 */
export class PackError extends TribunalError {
    /**
     * @param {string} message
     * @param {LoadErrorDetail[]} errors
     */
    constructor(message: string, errors: LoadErrorDetail[]);
    /** Every load error, in the order the CLI prints them. */
    errors: LoadErrorDetail[];
    /** The file of the first error. */
    file: string | null;
    /** Its line (1-based), when it has one. */
    line: number | null;
    /** Its column (1-based), when it has one. */
    column: number | null;
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
export function watch(pack: Pack, chunks: AsyncIterable<any> | Iterable<any>, options?: WatchOptions): Watched;
/**
 * The text of one streamed chunk: a string; an OpenAI Chat Completions chunk
 * (`choices[0].delta.content`); an OpenAI Responses event (`delta` of a
 * `response.output_text.delta`); an Anthropic `content_block_delta`
 * (`delta.text`). `null` for chunks that carry no text (a role, a tool call,
 * the end).
 * @param {any} chunk
 * @returns {string | null}
 */
export function chunkText(chunk: any): string | null;
