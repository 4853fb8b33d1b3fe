// The words every install review uses for what an app is granted: the terminal's
// (host-bridge/cli/review-text.ts) and the dashboard's (web/install-review.js, through the
// generated web/review-words.js). Each grant's label and meaning are the manifest schema's own
// metadata (`review` and `description` on permissions.*), the same words docs/manifest.md
// renders, so the owner reads one description of each grant wherever they read it. Checked once
// at load: every permission the review (and so the consent digest) carries has its words here.
import { z } from "zod";
import { ConfigGrantSchema, PermissionsSchema } from "./manifest";
import { InstallReviewSchema, type InstallReview } from "./install-review";

/** A permission field of the review, under review.permissions. */
export type ReviewPermission = keyof InstallReview["permissions"];

/** How a grant's value reads: a list of names, a yes or no, a tier, or the enforced host list. */
export type GrantValueKind = "list" | "flag" | "tier" | "hosts";

export interface GrantWords {
  field: ReviewPermission;
  /** The app.json field the grant comes from. */
  manifestField: string;
  /** The short label both reviews show before the grant's value. */
  label: string;
  /** What the grant lets the app do (the manifest reference's words). */
  meaning: string;
  kind: GrantValueKind;
}

interface GrantMeta {
  description?: string;
  review?: string;
}

function metaOf(schema: z.ZodType): GrantMeta {
  const inner = schema instanceof z.ZodOptional ? (schema.unwrap() as z.ZodType) : schema;
  return (inner.meta() ?? {}) as GrantMeta;
}

function kindOf(field: z.ZodType): GrantValueKind {
  // An optional review field (one absent when nothing is asked) reads as what it holds.
  const schema = field instanceof z.ZodOptional ? (field.unwrap() as z.ZodType) : field;
  if (schema instanceof z.ZodArray) return "list";
  if (schema instanceof z.ZodBoolean) return "flag";
  if (schema instanceof z.ZodObject) return "hosts";
  return "tier";
}

/** Where each review permission comes from in app.json: its own name, but configWrite. */
function manifestSourceOf(field: string): { path: string; schema: z.ZodType } | null {
  if (field === "configWrite") {
    const objectForm = ConfigGrantSchema.options[1];
    return { path: "permissions.config.write", schema: objectForm.shape.write };
  }
  const schema = (PermissionsSchema.shape as Record<string, z.ZodType>)[field];
  return schema ? { path: `permissions.${field}`, schema } : null;
}

function grantWords(): GrantWords[] {
  const reviewed = InstallReviewSchema.shape.permissions.shape as Record<string, z.ZodType>;
  const words = Object.entries(reviewed).map(([field, reviewSchema]): GrantWords => {
    const source = manifestSourceOf(field);
    const meta = source ? metaOf(source.schema) : {};
    if (!source || !meta.review || !meta.description)
      throw new Error(`review permission ${field} has no label and meaning on its manifest field`);
    return {
      field: field as ReviewPermission,
      manifestField: source.path,
      label: meta.review,
      meaning: meta.description,
      kind: kindOf(reviewSchema),
    };
  });
  const shown = new Set(words.map((w) => w.manifestField.split(".")[1]));
  const unshown = Object.keys(PermissionsSchema.shape).filter((key) => !shown.has(key));
  if (unshown.length > 0) throw new Error(`permissions ${unshown.join(", ")} reach no review field`);
  return words;
}

/** Every permission the review carries, in the review's order, with the words both reviews show. */
export const GRANT_WORDS: readonly GrantWords[] = grantWords();

/** The two groups of scan findings, as both reviews name them. */
export const FINDINGS_WORDS = {
  runtime: "In code the app runs",
  // A finding in a file nothing loads: a test, a document, or a file of a vendored package
  // (node_modules/, vendor/) the app's code never reaches. "Test files" alone misnamed the last.
  tests: "In files the app does not run: tests, documents and vendored package files nothing loads",
} as const;
