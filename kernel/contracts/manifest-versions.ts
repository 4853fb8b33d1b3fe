// Version ordering (MAN-02): one comparison for every version check, PEP 440 ordering that also
// reads semver pre-release spellings, so a release candidate or dev build sorts before its
// release (0.3.0rc1 < 0.3.0, 0.3.0-rc.1 < 0.3.0, 0.3.0.dev1 < 0.3.0a1); and the refusal of an
// app that needs a newer core, or a feature this core lacks.
import { refusal, type ManifestRefusal } from "./manifest-refusal";
import type { AppManifest } from "./manifest";

const VERSION_RE =
  /^v?(\d+(?:\.\d+)*)(?:[-_.]?(a|alpha|b|beta|c|rc|pre|preview)[-_.]?(\d+)?)?(?:[-_.]?(post|rev|r)[-_.]?(\d+)?)?(?:[-_.]?(dev)[-_.]?(\d+)?)?(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?$/i;

const PRE_RANK: Record<string, number> = { a: 0, alpha: 0, b: 1, beta: 1, c: 2, rc: 2, pre: 2, preview: 2 };

/** A sortable key for a version string, or null when it is not a version. */
export function parseVersion(text: string): number[] | null {
  const m = VERSION_RE.exec(text.trim());
  if (!m) return null;
  const release = m[1]!.split(".").map(Number);
  while (release.length > 1 && release[release.length - 1] === 0) release.pop();
  while (release.length < 8) release.push(0);
  if (release.length > 8) return null;
  const hasPre = m[2] !== undefined;
  const hasPost = m[4] !== undefined;
  const hasDev = m[6] !== undefined;
  // A bare dev release (1.0.dev1) sorts before every pre-release of 1.0.
  const preRank = hasPre ? PRE_RANK[m[2]!.toLowerCase()]! : hasDev && !hasPost ? -1 : 3;
  const preNum = hasPre ? Number(m[3] ?? 0) : 0;
  const postNum = hasPost ? Number(m[5] ?? 0) : -1;
  const devNum = hasDev ? Number(m[7] ?? 0) : Number.MAX_SAFE_INTEGER;
  return [...release, preRank, preNum, postNum, devNum];
}

/** Negative, zero or positive as a sorts before, with or after b; null if either is not a version. */
export function compareVersions(a: string, b: string): number | null {
  const ka = parseVersion(a);
  const kb = parseVersion(b);
  if (!ka || !kb) return null;
  for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i]! - kb[i]!;
  return 0;
}

/** MAN-02: refuse an app whose floor is above this core or that needs a feature this core lacks. */
export function checkCoreCompatibility(
  m: Pick<AppManifest, "minPersonalClawVersion" | "requiresCoreFeatures">,
  core: { version: string; features: readonly string[] },
): ManifestRefusal | null {
  if (m.minPersonalClawVersion !== undefined) {
    const order = compareVersions(m.minPersonalClawVersion, core.version);
    if (order === null) {
      return refusal(
        "core_incompatible",
        "minPersonalClawVersion",
        {
          reason: `the app's minPersonalClawVersion '${m.minPersonalClawVersion}' or this core's version '${core.version}' is not a version`,
        },
        { minPersonalClawVersion: m.minPersonalClawVersion, coreVersion: core.version },
      );
    }
    if (order > 0) {
      return refusal(
        "core_incompatible",
        "minPersonalClawVersion",
        { reason: `the app needs PersonalClaw ${m.minPersonalClawVersion} or later and this is ${core.version}` },
        { minPersonalClawVersion: m.minPersonalClawVersion, coreVersion: core.version },
      );
    }
  }
  const offered = new Set(core.features);
  const missing = (m.requiresCoreFeatures ?? []).filter((f) => !offered.has(f));
  if (missing.length > 0) {
    return refusal(
      "core_incompatible",
      "requiresCoreFeatures",
      {
        reason: `this core (${core.version}) does not offer the feature${missing.length > 1 ? "s" : ""} ${missing.map((f) => `'${f}'`).join(", ")}`,
      },
      { missingFeatures: missing, coreVersion: core.version },
    );
  }
  return null;
}
