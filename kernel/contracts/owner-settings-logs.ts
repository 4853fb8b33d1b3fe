// The owner's settings for <home>/logs/gateway.log: how large it grows before it is rotated, how
// many rotated files are kept, and whether its lines are text or JSON. Part of OWNER_SETTINGS
// (owner-settings.ts); `personalclaw start` reads them when it opens the log.
import type { SettingSpec } from "./owner-settings";

/** logs.max_size_mb: gateway.log is rotated past this many MiB (at least 1). */
export const GATEWAY_LOG_SIZE_RANGE_MB = { min: 1, max: 4096, default: 10 } as const;
/** logs.max_files: how many rotated files (gateway.log.1 …) are kept; the oldest is dropped. */
export const GATEWAY_LOG_FILES_RANGE = { min: 1, max: 100, default: 5 } as const;
/** logs.format: one line of text per entry, or one JSON object per line (time, level, source, message). */
export const GATEWAY_LOG_FORMATS = ["text", "json"] as const;
export type GatewayLogFormat = (typeof GATEWAY_LOG_FORMATS)[number];

// None of them loosens security: gateway.log is the processes' diagnostics, masked as it is
// written; the evidence is the security log, which keeps its own retention.
const never = () => false;

export const LOG_FILE_SETTINGS: readonly SettingSpec[] = [
  {
    path: "logs.max_size_mb",
    type: "integer",
    unit: "MiB",
    default: GATEWAY_LOG_SIZE_RANGE_MB.default,
    min: GATEWAY_LOG_SIZE_RANGE_MB.min,
    max: GATEWAY_LOG_SIZE_RANGE_MB.max,
    meaning:
      "How large logs/gateway.log grows, in MiB, before it is moved to gateway.log.1 and a new one started. Lines are never split across files.",
    security: false,
    loosens: never,
    consent: "gateway_log_size",
    title: "Change how large the gateway log grows",
    applies: "next_start",
  },
  {
    path: "logs.max_files",
    type: "integer",
    default: GATEWAY_LOG_FILES_RANGE.default,
    min: GATEWAY_LOG_FILES_RANGE.min,
    max: GATEWAY_LOG_FILES_RANGE.max,
    meaning: "How many rotated gateway logs (gateway.log.1 the newest) are kept beside it; the oldest is removed.",
    security: false,
    loosens: never,
    consent: "gateway_log_files",
    title: "Change how many old gateway logs are kept",
    applies: "next_start",
  },
  {
    path: "logs.format",
    type: "enum",
    values: GATEWAY_LOG_FORMATS,
    default: "text",
    meaning:
      'How logs/gateway.log writes each line: text ("<time> <message>") or json (one object per line with time, level, source and message, for log tools).',
    security: false,
    loosens: never,
    consent: "gateway_log_format",
    title: "Change how the gateway log is written",
    applies: "next_start",
  },
];
