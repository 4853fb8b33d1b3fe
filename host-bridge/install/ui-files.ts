// The UI files of an install (issue 11 item 3), listed from the very copy that moves into
// place, after every install step has run: a later writer (an install hook, a package step)
// must not have planted a link there. Each file is opened without following a link and hashed;
// the gateway serves a UI file only if it is in this list and its bytes still hash to it.
import { createHash } from "node:crypto";
import { constants } from "node:fs";
import { lstat, open, readdir } from "node:fs/promises";
import { join } from "node:path";
import { refuse, type Refusal } from "../staging/refusal";

/** More files than this in one UI folder is not a UI. */
export const MAX_UI_FILES = 2000;

export type UiFileList = { ok: true; files: Record<string, string> } | Refusal;

/** Lists `<appDir>/<uiFolder>` (a folder path ending in '/'): path inside the folder -> sha256 hex. */
export async function listUiFiles(appDir: string, uiFolder: string): Promise<UiFileList> {
  const files: Record<string, string> = {};
  // Every component of the folder itself must be a real folder, not a link to one.
  const parts = uiFolder.split("/").filter((p) => p !== "");
  for (let i = 1; i <= parts.length; i++) {
    const rel = parts.slice(0, i).join("/");
    const st = await lstat(join(appDir, rel)).catch(() => null);
    if (st === null) return { ok: true, files }; // no UI folder: nothing to serve
    if (!st.isDirectory()) return refuse("bundle_link_in_ui", { path: rel }, { field: "ui.entry" });
  }
  let count = 0;
  const walk = async (relInUi: string): Promise<Refusal | null> => {
    const abs = join(appDir, uiFolder, relInUi);
    for (const name of (await readdir(abs)).sort()) {
      const childRel = relInUi === "" ? name : `${relInUi}/${name}`;
      const shown = `${uiFolder}${childRel}`;
      const st = await lstat(join(abs, name));
      if (st.isDirectory()) {
        const refused = await walk(childRel);
        if (refused) return refused;
        continue;
      }
      if (!st.isFile()) return refuse("bundle_link_in_ui", { path: shown }, { field: "ui.entry" });
      if (++count > MAX_UI_FILES) return refuse("bundle_too_many_files", { limit: MAX_UI_FILES });
      const hashed = await hashNoFollow(join(abs, name));
      if (hashed === null) return refuse("bundle_link_in_ui", { path: shown }, { field: "ui.entry" });
      files[childRel] = hashed;
    }
    return null;
  };
  const refused = await walk("");
  return refused ?? { ok: true, files };
}

/** The SHA-256 (hex) of a regular file opened without following a link; null for anything else. */
export async function hashNoFollow(path: string): Promise<string | null> {
  let fh;
  try {
    fh = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    if (!(await fh.stat()).isFile()) return null;
    const hash = createHash("sha256");
    for await (const chunk of fh.createReadStream({ autoClose: false })) hash.update(chunk as Buffer);
    return hash.digest("hex");
  } finally {
    await fh.close();
  }
}
