// The scanner's rule set, as data. Each rule has a stable id, a severity and a one-line reason
// the review shows. docs/app-scanner.md documents every rule (a test keeps the two in step).
//
// Severity is what the finding means in code the app runs: a `dangerous` finding in a file the
// app runs refuses the install outright; the same finding in a file nothing runs (a test, a
// document) is a warning the owner may consent to. A `warning` rule is always consentable.

export type Severity = "dangerous" | "warning";

export type RuleMatch =
  /** A line of any staged file matches (files: "requirements" narrows to pip requirement files). */
  | { kind: "content"; pattern: RegExp; files: "any" | "requirements" }
  /** A file with one of these base names exists anywhere in the bundle. */
  | { kind: "file-name"; names: readonly string[] }
  /** A package.json anywhere declares one of these npm lifecycle scripts. */
  | { kind: "npm-lifecycle"; scripts: readonly string[] }
  /** A folder holds HEAD, objects/ and refs/: a git repository under some other name. */
  | { kind: "embedded-git" }
  /** A dependency declared in app.json, which the platform itself installs, matches. */
  | { kind: "manifest-dependency"; list: "pythonDependencies" | "npmPackages"; pattern: RegExp }
  /** A file the scanner could not read whole. */
  | { kind: "unscanned" };

export interface ScanRule {
  id: string;
  severity: Severity;
  reason: string;
  match: RuleMatch;
}

const anyFile = (pattern: RegExp): RuleMatch => ({ kind: "content", pattern, files: "any" });
const requirementsFile = (pattern: RegExp): RuleMatch => ({ kind: "content", pattern, files: "requirements" });

// Bounded gaps ({0,200}) keep every pattern linear on a 16 MiB minified line.
export const SCAN_RULES: readonly ScanRule[] = [
  // ---- destructive commands
  {
    id: "destructive-rm-root",
    severity: "dangerous",
    reason: "Recursively deletes the root, the home folder or a system folder.",
    match: anyFile(
      /\brm\s+(?:-{1,2}[\w-]+\s+){0,4}-[a-zA-Z]*(?:r[a-zA-Z]*f|f[a-zA-Z]*r)[a-zA-Z]*\s+(?:-{1,2}[\w-]+\s+){0,4}["']?(?:\/|~\/?|\$HOME\/?|\$\{HOME\}\/?|\/(?:home|etc|usr|var|boot|root|bin|lib|opt)\/?)\*?["']?(?=[\s;|&)`'"]|$)|--no-preserve-root/,
    ),
  },
  {
    id: "destructive-rmtree-root",
    severity: "dangerous",
    reason: "Deletes the root or the home folder from Python or Node code.",
    match: anyFile(
      /\b(?:shutil\.rmtree|fs\.rmSync|fs\.rm|rimraf(?:\.sync)?)\s*\(\s*(?:["'](?:\/|~\/?)["']|os\.path\.expanduser\(\s*["']~["']\s*\)|os\.homedir\(\)|Path\.home\(\))/,
    ),
  },
  {
    id: "destructive-mkfs",
    severity: "dangerous",
    reason: "Formats a filesystem.",
    match: anyFile(/\bmkfs(?:\.[a-z0-9]+)?\s+\S/),
  },
  {
    id: "destructive-dd-device",
    severity: "dangerous",
    reason: "Writes raw bytes over a disk device.",
    match: anyFile(/\bdd\b[^\n]{0,200}\bof=\/dev\/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|mapper)/),
  },
  {
    id: "destructive-device-redirect",
    severity: "dangerous",
    reason: "Redirects output over a disk device.",
    match: anyFile(/>\s*\/dev\/(?:sd[a-z]|hd[a-z]|vd[a-z]|nvme\d|mmcblk\d|disk\d)/),
  },
  {
    id: "destructive-fork-bomb",
    severity: "dangerous",
    reason: "A fork bomb exhausts the machine's processes.",
    match: anyFile(/:\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/),
  },
  {
    id: "destructive-chmod-root",
    severity: "dangerous",
    reason: "Recursively opens the root or a system folder to every user.",
    match: anyFile(/\bchmod\s+-R\s+(?:0?777|a\+rwx)\s+\/(?:etc|usr|var|home|root)?\/?(?=[\s;|&]|$)/),
  },

  // ---- reads of credential locations
  {
    id: "credential-ssh",
    severity: "dangerous",
    reason: "Reads SSH keys.",
    match: anyFile(/~\/\.ssh\b|["'`/]\.ssh(?:\/|["'`])|\bid_(?:rsa|dsa|ecdsa|ed25519)\b/),
  },
  {
    id: "credential-aws",
    severity: "dangerous",
    reason: "Reads AWS credentials.",
    match: anyFile(/\.aws\/(?:credentials|config)\b/),
  },
  { id: "credential-gnupg", severity: "dangerous", reason: "Reads the GnuPG keyring.", match: anyFile(/\.gnupg\b/) },
  {
    id: "credential-shadow",
    severity: "dangerous",
    reason: "Reads system password hashes.",
    match: anyFile(/\/etc\/(?:shadow|gshadow|master\.passwd)\b/),
  },
  {
    id: "credential-browser-store",
    severity: "dangerous",
    reason: "Reads a browser's cookie or saved-password store.",
    match: anyFile(
      /cookies\.sqlite|\bkey[34]\.db\b|\blogins\.json\b|Login Data|(?:Chrome|Chromium|Brave|Edge)[^\n"']{0,80}[/\\]Cookies\b|Library\/Cookies|\.mozilla\/firefox/,
    ),
  },
  {
    id: "credential-tool-tokens",
    severity: "dangerous",
    reason: "Reads a tool's stored login tokens (netrc, docker, kube, gh, npm, pypi).",
    match: anyFile(
      /(?:~|\$HOME|["'`/])\/?\.netrc\b|\.docker\/config\.json|\.kube\/config\b|\.config\/gh\/hosts\.yml|~\/\.npmrc\b|~\/\.pypirc\b/,
    ),
  },

  // ---- download and execute
  {
    id: "download-pipe-shell",
    severity: "dangerous",
    reason: "Pipes downloaded text into a shell or interpreter.",
    match: anyFile(
      /\b(?:curl|wget|fetch)\b[^\n|;]{0,300}\|\s*(?:sudo\s+)?(?:ba|z|da|k|fi)?sh\b|\b(?:curl|wget)\b[^\n|;]{0,300}\|\s*(?:sudo\s+)?(?:python3?|node|perl|ruby)\b/,
    ),
  },
  {
    id: "download-shell-substitution",
    severity: "dangerous",
    reason: "Runs downloaded text through a shell substitution.",
    match: anyFile(/\b(?:ba|z)?sh\s+(?:-c\s+)?["']?(?:\$\(|`|<\()\s*(?:curl|wget)\b|\bsource\s+<\(\s*(?:curl|wget)\b/),
  },
  {
    id: "eval-fetched",
    severity: "dangerous",
    reason: "Evaluates text fetched from the network as code.",
    match: anyFile(
      /\b(?:eval|exec|Function)\s*\([^\n]{0,200}\b(?:fetch|urlopen|requests\.get|httpx\.get|http\.get|https\.get|axios\.get|urllib\.request)\b|\bexec\s*\(\s*(?:compile\s*\()?\s*(?:requests|httpx)\.get\(/,
    ),
  },
  {
    id: "powershell-download-exec",
    severity: "dangerous",
    reason: "PowerShell download-and-run.",
    match: anyFile(
      /\b(?:iex|Invoke-Expression)\b[^\n]{0,200}\b(?:iwr|irm|Invoke-WebRequest|Invoke-RestMethod|DownloadString)\b/i,
    ),
  },

  // ---- supply chain
  {
    id: "npm-lifecycle-script",
    severity: "warning",
    reason: "npm runs this script by itself when the package is installed.",
    match: {
      kind: "npm-lifecycle",
      scripts: [
        "preinstall",
        "install",
        "postinstall",
        "prepare",
        "preprepare",
        "postprepare",
        "prepublish",
        "preuninstall",
        "uninstall",
        "postuninstall",
        "prepack",
        "postpack",
        "dependencies",
      ],
    },
  },
  {
    id: "pip-index-override",
    severity: "dangerous",
    reason: "Points pip at a package index or link page other than PyPI.",
    match: requirementsFile(/^\s*(?:-i|--index-url|--extra-index-url|-f|--find-links|--trusted-host)(?:\s|=|$)/),
  },
  {
    id: "pip-non-registry-source",
    severity: "dangerous",
    reason: "Installs a Python package from a URL, VCS, local path or file instead of the registry.",
    match: requirementsFile(
      /(?:^|\s|@\s*)(?:git|hg|svn|bzr)\+|\bhttps?:\/\/|(?:^|\s|@\s*)file:|^\s*(?:-e|--editable)(?:\s|=)|^\s*\.{0,2}\/\S/,
    ),
  },
  {
    id: "manifest-python-source",
    severity: "dangerous",
    reason:
      "A pythonDependencies entry the platform installs names an index, URL, VCS or path instead of a registry package.",
    match: {
      kind: "manifest-dependency",
      list: "pythonDependencies",
      pattern: /^\s*-|(?:git|hg|svn|bzr)\+|:\/\/|(?:^|@\s*)file:|^\s*\.{0,2}\//,
    },
  },
  {
    id: "manifest-npm-source",
    severity: "dangerous",
    reason:
      "An npmPackages entry the platform installs names a URL, git repository or path instead of a registry package.",
    match: {
      kind: "manifest-dependency",
      list: "npmPackages",
      pattern:
        /^\s*-|:\/\/|^(?:git|git\+\w+|github|gitlab|bitbucket|gist|file|link|portal):|^\s*\.{0,2}\/|^[\w.-]+\/[\w.-]+(?:#|$)/,
    },
  },
  {
    id: "planted-package-config",
    severity: "warning",
    reason: "A package-manager config file can redirect installs or run commands when a tool runs in this folder.",
    match: { kind: "file-name", names: [".npmrc", "pip.conf", "pip.ini", ".yarnrc", ".yarnrc.yml", ".pypirc"] },
  },
  {
    id: "embedded-git-repository",
    severity: "dangerous",
    reason:
      "A git repository under another name: git runs the hooks and config it names whenever a git command touches it.",
    match: { kind: "embedded-git" },
  },
  {
    id: "unscanned_file",
    severity: "warning",
    reason: "The scanner could not read this file whole (too large or unreadable); nothing in it was checked.",
    match: { kind: "unscanned" },
  },
];

/** Pip requirement and constraint files, wherever they sit. */
export function isRequirementsFile(relPath: string): boolean {
  const base = relPath.slice(relPath.lastIndexOf("/") + 1);
  return /^(?:requirements|constraints)[^/]*\.(?:txt|in)$/i.test(base);
}
