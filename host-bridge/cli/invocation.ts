// How the owner ran this CLI, worked out once at its start, so that every command it suggests
// ("start it with: ...") can be pasted back as it is: the same launcher (`personalclaw` on PATH,
// `node /abs/bin/personalclaw.mjs`, `npm start --`) and the same home. Never `npx personalclaw`:
// pasted outside the clone, npx would fetch whatever package of that name the registry holds.
import { existsSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { defaultHome } from "../settings";

export interface Invocation {
  /** The words that run the CLI, e.g. ["npx", "personalclaw"]. */
  launcher: string[];
  /** Set under `npm start`: its script already says `start`, so only `start` goes through npm. */
  startLauncher: string[] | null;
  /** The home to name with --home in a suggestion; null for the default home. */
  home: string | null;
}

export interface InvocationFacts {
  /** process.argv[1]: the script node was asked to run. */
  script: string;
  home: string;
  npmCommand: string;
  npmLifecycleEvent: string;
  path: string;
}

function isSameFile(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

/** Works out the launcher from what npm and the shell left in the environment. */
export function describeInvocation(facts: InvocationFacts): Invocation {
  const home = facts.home === defaultHome() ? null : facts.home;
  // Under npm (npm start, npx in the clone) the script's own absolute path runs from anywhere.
  if (facts.npmLifecycleEvent === "start")
    return { launcher: ["node", facts.script], startLauncher: ["npm", "start", "--"], home };
  if (facts.npmCommand === "exec") return { launcher: ["node", facts.script], startLauncher: null, home };
  const onPath = facts.path
    .split(":")
    .filter((dir) => dir.startsWith("/"))
    .some((dir) => existsSync(join(dir, "personalclaw")) && isSameFile(join(dir, "personalclaw"), facts.script));
  if (onPath) return { launcher: ["personalclaw"], startLauncher: null, home };
  return { launcher: ["node", facts.script], startLauncher: null, home };
}

/** A word as a POSIX shell reads it back unchanged. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_/.:,@%+=-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

let current: Invocation = { launcher: ["personalclaw"], startLauncher: null, home: null };

/** Records how this process was invoked; the CLI's entry calls it once. */
export function recordInvocation(invocation: Invocation): void {
  current = invocation;
}

/** The launcher alone, for usage lines: `personalclaw` or `node /abs/bin/personalclaw.mjs`. */
export function programName(): string {
  return current.launcher.map(shellWord).join(" ");
}

/** A command line the owner can paste: the launcher, the words, and --home when the home is not the default. */
export function commandHint(...words: string[]): string {
  const launcher = words[0] === "start" && current.startLauncher ? current.startLauncher : current.launcher;
  const rest = words[0] === "start" && current.startLauncher ? words.slice(1) : words;
  const home = current.home === null ? [] : ["--home", current.home];
  // A placeholder such as <folder> is for the reader to replace, not a word to quote.
  return [...launcher, ...rest, ...home].map((word) => (/^<[^<>\s]+>$/.test(word) ? word : shellWord(word))).join(" ");
}

/** A home as prose: `~/.personalclaw` rather than the full path when it is under the user's home. */
export function homeInProse(home: string): string {
  const mine = homedir();
  return home === mine || home.startsWith(`${mine}/`) ? `~${home.slice(mine.length)}` : home;
}
