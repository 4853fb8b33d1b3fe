// The field shapes every part of the app.json contract builds on, defined once so two parts
// cannot drift: bounded text, bounded lists, paths inside the app folder and plain paths on
// the app's backend.
import { z } from "zod";

/** Non-empty text of at most `max` characters. */
export const shortText = (max: number) => z.string().min(1).max(max);

/** At most 512 strings of at most 512 characters each. */
export const stringList = z.array(z.string().max(512)).max(512);

/** A relative path inside the app folder (checked for escapes after parsing, see resourcePathFields in manifest.ts). */
export const resourcePath = z.string().min(1).max(1024);

/**
 * An absolute path on the app's backend (its health path, a job's route): no query, no encoded
 * characters, nothing a router could read two ways. The health path is exempt from the proxy
 * signature, so it must be this plain.
 */
export const plainBackendPath = z
  .string()
  .max(256)
  .regex(/^\/[A-Za-z0-9._~\-/]*$/, "must be an absolute path of letters, digits and . _ ~ - /");
