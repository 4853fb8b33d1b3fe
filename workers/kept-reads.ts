// Reads of a Durable Object kept in the isolate under the object's change epoch
// (durable/change-epoch.ts): a kept answer is used only while the epoch it was read under is
// current, and the object bumps that epoch in the same turn as every write the answer could
// reflect, so a change is seen by the very next request. Nothing is kept until the object has
// shown, once per isolate, that it shares this module instance and so its epoch.
import { isolateProbe, type ChangeEpoch } from "../durable/change-epoch";
import type { Env } from "../durable/env";

/** An object that can say whether it sees the caller's isolate probe. */
interface ProbedObject {
  sharesIsolate(probe: string): Promise<boolean>;
}

/** The one-time proof that `object` shares the worker's module instance (null until asked). */
export function sharedEpochProof(object: (env: Env) => ProbedObject): (env: Env) => Promise<boolean> {
  let shares: boolean | null = null;
  return async (env) => {
    shares ??= await object(env).sharesIsolate(isolateProbe());
    return shares;
  };
}

interface Kept<T> {
  epoch: number;
  value: T;
}

/**
 * One kind of kept read, by key. Only non-null answers are kept (an answer about an installed
 * app, say: a request cannot fill this with names of its own choosing), and the epoch is taken
 * before the call: a write that lands while the call is under way leaves the answer stale,
 * never current.
 */
export function keptReads<T>(
  epoch: ChangeEpoch,
  shared: (env: Env) => Promise<boolean>,
  read: (env: Env, key: string) => Promise<T | null>,
): (env: Env, key: string) => Promise<T | null> {
  const kept = new Map<string, Kept<T>>();
  return async (env, key) => {
    const current = epoch.current;
    const hit = kept.get(key);
    if (hit && hit.epoch === current) return hit.value;
    const value = await read(env, key);
    if (value === null || !(await shared(env))) kept.delete(key);
    else kept.set(key, { epoch: current, value });
    return value;
  };
}
