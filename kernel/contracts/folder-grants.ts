// Folder grants: an app declares a need (permissions.folders), only the owner chooses the folder,
// and every child of the app sees it at /folders/<need> alone, read-only unless the need allows
// and the owner chose read-write. The grant lives in the app's AppRegistry record; the bridge
// checks the folder when it is chosen and again, by descriptor, at every start. Imports nothing but zod.
import { z } from "zod";

/** A need's name: it becomes a path segment (/folders/<name>) and part of an environment name. */
export const FOLDER_NEED_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Where every granted folder appears inside an app's sandbox; its host path is never shown. */
export const FOLDERS_INSIDE = "/folders";

export const FolderAccessSchema = z.enum(["read", "read-write"]);
export type FolderAccess = z.infer<typeof FolderAccessSchema>;

/** One folder the owner granted to one need of an app, as the record keeps it. */
export const FolderGrantSchema = z
  .object({
    need: z.string().regex(FOLDER_NEED_PATTERN),
    /** The folder's real path on the host: absolute, no link in any component (checked by the bridge). */
    path: z.string().min(1).max(4096),
    access: FolderAccessSchema,
    grantedAt: z.string().max(64),
    /** The owner chose a whole home folder on purpose (`whole_home`); otherwise one is refused. */
    wholeHome: z.boolean().optional(),
  })
  .strict();
export type FolderGrant = z.infer<typeof FolderGrantSchema>;

/** PUT /api/apps/:name/folders/:need: the folder the owner chooses; read-only unless read-write is asked for. */
export const FolderGrantRequestSchema = z
  .object({
    path: z.string().min(1).max(4096),
    access: FolderAccessSchema.optional(),
    /** The owner's explicit choice of a whole home folder (still refused when it holds the PersonalClaw home). */
    whole_home: z.boolean().optional(),
  })
  .strict();

/** One declared need with the folder granted to it, as GET /api/apps/:name/folders shows it. */
export const FolderNeedViewSchema = z.strictObject({
  name: z.string(),
  why: z.string(),
  /** What the manifest allows at most. */
  access: FolderAccessSchema,
  inside: z.string(),
  grant: FolderGrantSchema.nullable(),
});
export const FolderListingSchema = z.strictObject({ app: z.string(), folders: z.array(FolderNeedViewSchema) });
export type FolderListing = z.infer<typeof FolderListingSchema>;

/** The bridge's check of a chosen folder (POST /folders/resolve): the real path it will bind, or a refusal code. */
export const FolderResolveRequestSchema = z
  .object({ path: z.string().min(1).max(4096), access: FolderAccessSchema, wholeHome: z.boolean() })
  .strict();
export const FolderResolvedSchema = z.object({ path: z.string() });

/** The path a need's folder has inside the sandbox. */
export function folderInside(need: string): string {
  return `${FOLDERS_INSIDE}/${need}`;
}

/** The environment variable naming a need's folder inside: PERSONALCLAW_FOLDER_<NEED>, `-` as `_`. */
export function folderEnvName(need: string): string {
  return `PERSONALCLAW_FOLDER_${need.toUpperCase().replace(/-/g, "_")}`;
}

/**
 * The grants a start applies: only those whose need the manifest still declares, each narrowed
 * to what the need allows. An update that drops a need or narrows it to read takes effect at
 * once, whatever the record still holds.
 */
export function effectiveGrants(
  needs: ReadonlyArray<{ name: string; access: FolderAccess }> | undefined,
  grants: readonly FolderGrant[] | undefined,
): FolderGrant[] {
  const allowed = new Map((needs ?? []).map((n) => [n.name, n.access]));
  return (grants ?? []).flatMap((grant) => {
    const most = allowed.get(grant.need);
    if (most === undefined) return [];
    return [{ ...grant, access: most === "read" ? "read" : grant.access }];
  });
}

/**
 * A short stamp of the grants a start applied: `mcp run` names it when it asks whether its
 * server may go on, and a change of the app's folders since ends the server (its view is fixed
 * at its start). Not a secret and not an integrity check: a change detector over owner data.
 */
export function folderGrantsStamp(grants: readonly FolderGrant[]): string {
  const text = JSON.stringify(
    [...grants].sort((a, b) => a.need.localeCompare(b.need)).map((g) => [g.need, g.path, g.access]),
  );
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return `${grants.length}-${hash.toString(16).padStart(8, "0")}`;
}

/**
 * The grants an app's install or uninstall hook gets: only those of needs that say `hooks: true`,
 * each narrowed as for every child. Every other need's folder stays out of its hooks.
 */
export function hookGrants(
  needs: ReadonlyArray<{ name: string; access: FolderAccess; hooks?: boolean }> | undefined,
  grants: readonly FolderGrant[] | undefined,
): FolderGrant[] {
  return effectiveGrants(
    (needs ?? []).filter((need) => need.hooks === true),
    grants,
  );
}

/** How the review shows one need: "name (access): why", the words the consent digest covers; a need its hooks share says so. */
export function folderNeedWords(need: { name: string; why: string; access: FolderAccess; hooks?: boolean }): string {
  return `${need.name} (${need.access}${need.hooks === true ? ", its hooks too" : ""}): ${need.why}`;
}
