export = assertWithTribunal;
/**
 * The assertion promptfoo calls: judges `output` with the pack in
 * `context.config.pack`, the test's `expected`, `meta` and `messages`
 * variables going with it.
 * @param {unknown} output The provider's output (a string; an object
 *   promptfoo parsed is judged as its JSON text).
 * @param {{config?: AssertionConfig, vars?: Record<string, unknown>, test?: {description?: string}}} context
 * @returns {Promise<GradingResult>}
 */
declare function assertWithTribunal(output: unknown, context: {
    config?: AssertionConfig;
    vars?: Record<string, unknown>;
    test?: {
        description?: string;
    };
}): Promise<GradingResult>;
declare namespace assertWithTribunal {
    export { grading, AssertionConfig, GradingResult };
}
/**
 * The grading of one result record: promptfoo's pass, score and reason, and a
 * component result per metric.
 * @param {import('./index.js').ResultRecord} result
 * @returns {GradingResult}
 */
declare function grading(result: import("./index.js").ResultRecord): GradingResult;
/**
 * The assertion's `config`.
 */
type AssertionConfig = {
    /**
     * The rule pack's folder (or pack.yaml).
     */
    pack: string;
    /**
     * As `Pack.load`'s.
     */
    overrides?: Record<string, unknown> | undefined;
    allowPlugins?: boolean | undefined;
    pluginDirs?: string[] | undefined;
    allowPaths?: string[] | undefined;
    cacheDir?: string | undefined;
    /**
     * The test variable holding the expected
     * value (default `expected`).
     */
    expectedVar?: string | undefined;
    /**
     * The test variable holding `meta` (default `meta`).
     */
    metaVar?: string | undefined;
    /**
     * The test variable holding an agent
     * transcript (default `messages`).
     */
    messagesVar?: string | undefined;
};
/**
 * What promptfoo takes from an assertion.
 */
type GradingResult = {
    pass: boolean;
    score: number;
    reason: string;
    componentResults?: GradingResult[] | undefined;
    namedScores?: Record<string, number> | undefined;
};
