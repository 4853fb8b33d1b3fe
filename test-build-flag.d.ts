/**
 * True only in the test build (dist/test/, see docs/design/test-build.md). esbuild replaces it
 * with a literal, so the shipped bundles lose every `if (TEST_BUILD)` branch and what it names.
 */
declare const TEST_BUILD: boolean;
