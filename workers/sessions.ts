// The worker's one door to SessionStore. Checking a credential is on every request's path,
// so a verified session is kept here briefly; every call that can end or evict a session
// (sign-out, key rotation, minting past a limit, revoking an app) goes through this module
// and clears what is kept, so it takes effect on the very next request. The store still
// learns of each session's use at least once a minute (least-recently-used eviction).
import {
  APP_TOKEN_TTL_MS,
  BROWSER_SESSION_TTL_MS,
  MAX_TTL_MS,
  type CheckResult,
  type LinkResult,
  type MintedToken,
  type SessionView,
} from "../kernel/contracts/session";
import type { Env } from "../durable/env";
import { sessionsEpoch } from "../durable/change-epoch";
import { sessionStore } from "../durable/instances";
import { keptReads, sharedEpochProof } from "./kept-reads";

const RECHECK_MS = 60_000;

/** How long a browser sign-in opened now lasts: auth.session_ttl of this start, never above 90 days (AUTH-19). */
export function browserSessionTtlMs(env: Env): number {
  const seconds = Number(env.SESSION_TTL_S);
  if (!Number.isInteger(seconds) || seconds <= 0) return BROWSER_SESSION_TTL_MS;
  return Math.min(seconds * 1000, MAX_TTL_MS);
}
const MAX_KEPT = 2_000;
const verified = new Map<string, { result: Extract<CheckResult, { ok: true }>; checkedAt: number }>();
const appTokens = new Map<string, { token: string; expiresAt: number; epoch: string }>();

// Every session the store holds (the clock of 0 leaves none out), kept until the store changes;
// each caller then leaves out what has expired by its own clock, as the store's list(now) does.
const keptSessions = keptReads<SessionView[]>(
  sessionsEpoch,
  sharedEpochProof(sessionStore),
  async (env) => (await sessionStore(env).list(0)) as SessionView[],
);

function forgetAll(): void {
  verified.clear();
  appTokens.clear();
}

async function changing<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } finally {
    forgetAll();
  }
}

/** SessionStore as the worker uses it. */
export function sessions(env: Env) {
  return {
    /** A token presented as cookie or Bearer; answered from what is kept while it is fresh. */
    async check(token: string, now: number): Promise<CheckResult> {
      const kept = verified.get(token);
      if (kept && kept.result.session.expiresAt > now && now - kept.checkedAt < RECHECK_MS && now >= kept.checkedAt)
        return kept.result;
      const result = (await sessionStore(env).check(token, now)) as CheckResult;
      if (result.ok) {
        if (verified.size >= MAX_KEPT) verified.clear();
        verified.set(token, { result, checkedAt: now });
      } else verified.delete(token);
      return result;
    },
    /**
     * The app's token, reused while more than half of its hour is left (APPID-02) and while
     * the registry's token epoch for the app is unchanged (enable, disable and removal change it).
     */
    async appToken(app: string, epoch: string, now: number): Promise<string> {
      const kept = appTokens.get(app);
      if (kept && kept.epoch === epoch && kept.expiresAt - now > APP_TOKEN_TTL_MS / 2) return kept.token;
      const minted = await changing(
        async () => (await sessionStore(env).appToken(app, now)) as { token: string; expiresAt: number },
      );
      appTokens.set(app, { token: minted.token, expiresAt: minted.expiresAt, epoch });
      return minted.token;
    },
    /** Every sign-in alive at `now`, newest first: kept under SessionStore's change epoch, filtered by this clock. */
    list: async (now: number): Promise<SessionView[]> =>
      (await keptSessions(env, ""))!.filter((session) => session.expiresAt > now),
    openLink: (token: string, address: string, userAgent: string | null, now: number) =>
      changing(
        async () =>
          (await sessionStore(env).openLink(token, address, now, browserSessionTtlMs(env), userAgent)) as LinkResult & {
            evicted?: SessionView[];
          },
      ),
    mintToken: (issuer: string, ttlMs: number, now: number) =>
      changing(
        async () =>
          (await sessionStore(env).mintToken(issuer, ttlMs, now)) as MintedToken & {
            evicted: SessionView[];
            superseded: SessionView[];
          },
      ),
    signOut: (
      scope: "this" | "one" | "others" | "everywhere",
      currentId: string | null,
      targetId: string | null,
      now: number,
    ) => changing(async () => (await sessionStore(env).signOut(scope, currentId, targetId, now)) as SessionView[]),
    rename: (id: string, name: string | null, now: number) =>
      changing(async () => (await sessionStore(env).rename(id, name, now)) as SessionView | null),
    rotateKey: (now: number) => changing(async () => (await sessionStore(env).rotateKey(now)) as number),
    revokeApp: (app: string, now: number) =>
      changing(async () => (await sessionStore(env).revokeApp(app, now)) as number),
  };
}
