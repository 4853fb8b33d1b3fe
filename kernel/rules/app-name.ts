// The one app-name rule: kebab-case (a-z, 0-9 and single dashes), at most 64 characters. An
// app's name becomes folders, sockets, secret bindings and URL segments, so every place that
// takes one checks it here.
import { z } from "zod";

/** kebab-case: a-z, 0-9 and single dashes, no leading, trailing or doubled dash. */
export const APP_NAME_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** A manifest's name, and every name an API takes: the pattern, 1 to 64 characters. */
export const AppNameSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(APP_NAME_PATTERN, "must be kebab-case: a-z, 0-9 and single dashes");
