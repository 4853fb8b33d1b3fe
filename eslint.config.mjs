// Lint rules for the whole tree. Two rules are the project's own: a child is spawned with a
// file and an argument list, never a shell string, and a secret is compared in constant time.
import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

const SECRET_NAME = "/(secret|token|signature|mac|password)$/i";
// An equality between two values (a literal, undefined or null on either side is a presence check, not a comparison).
const SECRET_COMPARISON =
  "BinaryExpression[operator=/^[!=]==?$/][left.type!='Literal'][right.type!='Literal']:not([left.type='Identifier'][left.name='undefined']):not([right.type='Identifier'][right.name='undefined'])";

export default tseslint.config(
  {
    ignores: [
      "dist/**",
      "test-artifacts/**",
      "node_modules/**",
      "coverage/**",
      "test/fixtures/**",
      "apps/fixtures/*/vendor/**",
      // Generated (scripts/render-review-words.ts): its words from the kernel, its source summary as the
      // build compiles kernel/contracts/source-review.ts, which is linted; a test compares both.
      "web/review-words.js",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", caughtErrors: "none", ignoreRestSiblings: true },
      ],
      // The text-safety rules and the path and name checks match control characters on purpose.
      "no-control-regex": "off",
      "no-restricted-imports": [
        "error",
        {
          paths: [
            {
              name: "node:child_process",
              importNames: ["exec", "execSync"],
              message: "Spawn with a file and an argument list (execFile/spawn), never a shell string.",
            },
            {
              name: "child_process",
              importNames: ["exec", "execSync"],
              message: "Spawn with a file and an argument list (execFile/spawn), never a shell string.",
            },
            {
              name: "execa",
              importNames: ["execaCommand", "execaCommandSync", "$"],
              message: "Spawn with a file and an argument list (execa(file, args)), never a command string.",
            },
          ],
        },
      ],
      "no-restricted-syntax": [
        "error",
        {
          selector: "Property[key.name='shell'][value.value=true]",
          message: "A child never runs through a shell: pass a file and an argument list.",
        },
        {
          selector:
            "CallExpression[callee.name=/^(spawn|spawnSync|execFile|execFileSync|execa|execaSync)$/] > TemplateLiteral.arguments:first-child",
          message: "Spawn with a fixed file and an argument list, never a built command string.",
        },
        ...[`Identifier[name=${SECRET_NAME}]`, `MemberExpression[property.name=${SECRET_NAME}]`].map((operand) => ({
          selector: `${SECRET_COMPARISON} > ${operand}`,
          message:
            "Compare secrets in constant time (timingSafeEqual / the contracts' constant-time compare), never with === or !==.",
        })),
      ],
    },
  },
  {
    // A chain MAC is a public value, stored in its row and shown by `security events`; the key that makes it is the
    // secret. Comparing two MACs of the log tells a caller nothing it could not read.
    files: ["durable/security-log/**/*.ts", "kernel/chain/**/*.ts", "host-bridge/sel-anchor.ts"],
    rules: { "no-restricted-syntax": "off" },
  },
  {
    // Size that reads: a file says one thing (at most 500 lines), a function does one step (at most 120).
    // Tests are apart: a suite's describe block holds its cases.
    files: ["**/*.{ts,mjs,js,cjs}"],
    ignores: ["**/*.test.ts", "test/**"],
    rules: {
      "max-lines": ["error", { max: 500 }],
      "max-lines-per-function": ["error", { max: 120 }],
    },
  },
  {
    // The justified exceptions, each named here and nowhere else.
    // hmac-sha256.ts: SHA-256's compression is one unrolled function so the MAC of every security-log row and
    // every proxied request runs without a call per round (docs/performance.md, "The mac is synchronous").
    files: ["kernel/crypto/hmac-sha256.ts"],
    rules: { "max-lines-per-function": "off" },
  },
  {
    // Tests read loosely shaped JSON answers and poke at internals on purpose.
    files: ["**/*.test.ts", "test/**/*.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
  {
    // The files preloaded inside the sandbox are CommonJS: Node loads them with --require.
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs" },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
  {
    files: ["bench/workers/**/*.js"],
    languageOptions: { globals: { ...globals.serviceworker, WebSocketPair: "readonly" } },
  },
  {
    files: ["web/**/*.js", "apps/**/ui/**/*.js", "apps/sdk/browser/**/*.js", "host-bridge/cli/templates/ui/**/*.js"],
    languageOptions: { globals: { ...globals.browser } },
  },
);
