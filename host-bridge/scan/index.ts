// What other modules may use from scan.
export {
  scanStaged,
  verdictOf,
  MAX_SCANNED_FILE_BYTES,
  type Finding,
  type ScanResult,
  type Verdict,
  type ScanOptions,
} from "./scan-staged";
export { SCAN_RULES, type ScanRule, type Severity } from "./rules";
export { isTestPath } from "./runtime-reach";
