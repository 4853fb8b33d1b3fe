// What a keep-data uninstall records beside the data/ it parks (issue 11 item 5): kept data
// belongs to the install it came from, so a later install of the same name shows whose it is
// and takes it only when the owner says so. The host bridge writes and reads the file; the
// gateway shows it; both parse it with this one schema.
import { z } from "zod";
import { APP_NAME_PATTERN } from "../rules/app-name";

export const ParkedDataSchema = z
  .object({
    name: z.string().regex(APP_NAME_PATTERN).max(64),
    version: z.string().min(1).max(64),
    consentDigest: z.string().max(200),
    parkedAt: z.string().max(40),
  })
  .strict();
export type ParkedData = z.infer<typeof ParkedDataSchema>;

/** A parked data/ as listed and reviewed: the fields are null when its record is missing or unreadable. */
export const ParkedDataViewSchema = z.object({
  name: z.string(),
  version: z.string().nullable(),
  consentDigest: z.string().nullable(),
  parkedAt: z.string().nullable(),
});
export type ParkedDataView = z.infer<typeof ParkedDataViewSchema>;
