// The bridge operation that reads an app backend's last log lines for the dashboard's App
// detail page: request and answer, one schema each, imported by both sides.
import { z } from "zod";
import { APP_NAME_PATTERN } from "../rules/app-name";

/** At most this many lines are answered, and searched for, at once. */
export const APP_LOG_MAX_LINES = 500;

export const AppLogRequestSchema = z
  .object({
    name: z.string().regex(APP_NAME_PATTERN),
    lines: z.number().int().min(1).max(APP_LOG_MAX_LINES),
    /** Case-insensitive text every answered line holds, searched in the masked line. */
    q: z.string().max(200).optional(),
  })
  .strict();
export type AppLogRequest = z.infer<typeof AppLogRequestSchema>;

export const AppLogAnswerSchema = z.object({
  /** Oldest first, each masked and escaped. */
  lines: z.array(z.string()),
  /** Whether older lines of this backend lie beyond the part of the log that was read. */
  truncated: z.boolean(),
});
export type AppLogAnswer = z.infer<typeof AppLogAnswerSchema>;
