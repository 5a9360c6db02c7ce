// @ts-check
// Tribunal as a promptfoo assertion: promptfoo's `javascript` assertion type
// loads this module and calls it with each output. In promptfooconfig.yaml:
//
//   defaultTest:
//     assert:
//       - type: javascript
//         value: file://node_modules/tribunal/promptfoo.js
//         config:
//           pack: rules/ksi-emission      # the rule pack (relative to the working folder)
//
// The test passes when Tribunal's status is PASS; its score is Tribunal's
// score; the reason lists the issues and the feedback; there is one component
// result per metric. See docs/node.md.
'use strict';

const path = require('node:path');
const { Pack } = require('./index.js');

/**
 * @typedef {object} AssertionConfig The assertion's `config`.
 * @property {string} pack The rule pack's folder (or pack.yaml).
 * @property {Record<string, unknown>} [overrides] As `Pack.load`'s.
 * @property {boolean} [allowPlugins]
 * @property {string[]} [pluginDirs]
 * @property {string[]} [allowPaths]
 * @property {string} [cacheDir]
 * @property {string} [expectedVar] The test variable holding the expected
 *   value (default `expected`).
 * @property {string} [metaVar] The test variable holding `meta` (default `meta`).
 * @property {string} [messagesVar] The test variable holding an agent
 *   transcript (default `messages`).
 */

/**
 * @typedef {object} GradingResult What promptfoo takes from an assertion.
 * @property {boolean} pass
 * @property {number} score
 * @property {string} reason
 * @property {GradingResult[]} [componentResults]
 * @property {Record<string, number>} [namedScores]
 */

/** Packs loaded so far, by their load settings: each is compiled once. */
const packs = new Map();

/**
 * @param {AssertionConfig} config
 * @returns {Pack}
 */
function packFor(config) {
  if (!config || typeof config.pack !== 'string') {
    throw new Error(
      'tribunal/promptfoo: the assertion needs `config: { pack: <the rule pack folder> }`',
    );
  }
  const { pack, overrides, allowPlugins, pluginDirs, allowPaths, cacheDir } = config;
  /** @type {import('./index.js').LoadOptions} */
  const options = {};
  if (overrides !== undefined) options.overrides = overrides;
  if (allowPlugins !== undefined) options.allowPlugins = allowPlugins;
  if (pluginDirs !== undefined) options.pluginDirs = pluginDirs;
  if (allowPaths !== undefined) options.allowPaths = allowPaths;
  if (cacheDir !== undefined) options.cacheDir = cacheDir;
  const key = JSON.stringify([path.resolve(pack), options]);
  let loaded = packs.get(key);
  if (!loaded) {
    loaded = Pack.load(pack, options);
    packs.set(key, loaded);
  }
  return loaded;
}

/**
 * The grading of one result record: promptfoo's pass, score and reason, and a
 * component result per metric.
 * @param {import('./index.js').ResultRecord} result
 * @returns {GradingResult}
 */
function grading(result) {
  const issues = result.issues ?? [];
  const line = (/** @type {import('./index.js').Issue} */ issue) =>
    `[${issue.severity}] ${issue.code}${issue.path ? ` at ${issue.path}` : ''}: ${issue.message}`;
  const parts = [`Tribunal ${result.status}, score ${result.score ?? 'none'} (${result.pack})`];
  if (result.error) parts.push(`error: ${result.error}`);
  for (const issue of issues) parts.push(line(issue));
  if (result.feedback) parts.push(`feedback: ${result.feedback}`);
  const componentResults = Object.entries(result.metrics ?? {}).map(([name, metric]) => {
    const own = issues.filter((issue) => issue.rule === name);
    const failed = own.some((issue) => issue.severity === 'error');
    /** @type {GradingResult} */
    const component = {
      pass: metric.score !== null && !failed,
      score: metric.score ?? 0,
      reason:
        metric.score === null
          ? `${name}: skipped${metric.skipped ? `: ${metric.skipped}` : ''}`
          : `${name}: score ${metric.score}${own.length ? `; ${own.map(line).join('; ')}` : ''}`,
    };
    return component;
  });
  /** @type {Record<string, number>} */
  const namedScores = {};
  for (const [name, metric] of Object.entries(result.metrics ?? {})) {
    if (metric.score !== null) namedScores[name] = metric.score;
  }
  return {
    pass: result.status === 'PASS',
    score: result.score ?? 0,
    reason: parts.join('\n'),
    componentResults,
    namedScores,
  };
}

/**
 * The assertion promptfoo calls: judges `output` with the pack in
 * `context.config.pack`, the test's `expected`, `meta` and `messages`
 * variables going with it.
 * @param {unknown} output The provider's output (a string; an object
 *   promptfoo parsed is judged as its JSON text).
 * @param {{config?: AssertionConfig, vars?: Record<string, unknown>, test?: {description?: string}}} context
 * @returns {Promise<GradingResult>}
 */
async function assertWithTribunal(output, context) {
  const config = /** @type {AssertionConfig} */ (context?.config);
  const pack = packFor(config);
  const vars = context?.vars ?? {};
  const text = typeof output === 'string' ? output : JSON.stringify(output);
  const result = await pack.evaluateAsync(text, {
    id: context?.test?.description,
    expected: vars[config.expectedVar ?? 'expected'],
    meta: vars[config.metaVar ?? 'meta'],
    messages: /** @type {unknown[] | undefined} */ (vars[config.messagesVar ?? 'messages']),
  });
  return grading(result);
}

module.exports = assertWithTribunal;
module.exports.grading = grading;
