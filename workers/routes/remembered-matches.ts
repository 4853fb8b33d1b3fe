// Hono's trie router with its answers remembered. The route table is fixed once the gateway is
// built, so one method and path always match the same rows with the same params: a request
// that repeats one (the dashboard's polls, a script's or an agent's calls, an app's own API)
// skips the trie walk. Hono only reads a match result, so one answer serves every request.
import type { Result, Router } from "hono/router";
import { TrieRouter } from "hono/router/trie-router";

// At most this many paths per method, and methods, are remembered: a flood of new ones (anyone
// can send them) empties the memory, never grows it.
const REMEMBERED_PER_METHOD = 512;
const REMEMBERED_METHODS = 16;

/** Answers exactly what Hono's TrieRouter answers, from memory when the method and path were asked before. */
export class RememberedMatches<T> implements Router<T> {
  readonly name = "RememberedMatches";
  private readonly trie = new TrieRouter<T>();
  private readonly byMethod = new Map<string, Map<string, Result<T>>>();

  /** How many answers are remembered now. */
  get size(): number {
    let count = 0;
    for (const remembered of this.byMethod.values()) count += remembered.size;
    return count;
  }

  add(method: string, path: string, handler: T): void {
    this.byMethod.clear();
    this.trie.add(method, path, handler);
  }

  match(method: string, path: string): Result<T> {
    let remembered = this.byMethod.get(method);
    if (remembered === undefined) {
      if (this.byMethod.size >= REMEMBERED_METHODS) this.byMethod.clear();
      this.byMethod.set(method, (remembered = new Map()));
    }
    const known = remembered.get(path);
    if (known !== undefined) return known;
    const result = this.trie.match(method, path);
    if (remembered.size >= REMEMBERED_PER_METHOD) remembered.clear();
    remembered.set(path, result);
    return result;
  }
}
