import { describe, expect, it } from "vitest";
import { connectGrant, frameVerdict, type SocketScope } from "./event-scope";

const owner: SocketScope = { principal: "owner", app: null, granted: [], session: "s1" };
const notes: SocketScope = {
  principal: "app:notes",
  app: "notes",
  granted: ["app.installed", "backend.health_changed"],
  session: null,
};
const declares = (events: string[], enabled = true) => ({ enabled, events });

describe("the one per-socket frame filter", () => {
  it("an unclassified name is denied to every socket, the owner's included", () => {
    expect(frameVerdict(owner, null, { type: "made.up", data: {} })).toEqual({
      deliver: false,
      reason: "unclassified",
    });
    expect(frameVerdict(notes, declares(["made.up"]), { type: "made.up", data: {} })).toEqual({
      deliver: false,
      reason: "unclassified",
    });
  });

  it("the owner hears every classified event", () => {
    for (const type of ["security_log.appended", "approval.raised", "app.installed", "hub.hello"]) {
      expect(frameVerdict(owner, null, { type, data: {} }).deliver, type).toBe(true);
    }
  });

  it("an app hears a declarable event only when it was granted at connect and is still declared", () => {
    const frame = { type: "app.installed", data: { app: "x" } };
    expect(frameVerdict(notes, declares(["app.installed"]), frame).deliver).toBe(true);
    expect(frameVerdict(notes, declares([]), frame)).toEqual({ deliver: false, reason: "narrowed" });
    // Widening the declaration does not widen an open socket.
    expect(frameVerdict(notes, declares(["app.installed", "app.updated"]), { type: "app.updated", data: {} })).toEqual({
      deliver: false,
      reason: "not_declared",
    });
  });

  it("owner-only events never reach an app, except an approval it raised itself", () => {
    expect(frameVerdict(notes, declares(notes.granted), { type: "security_log.appended", data: { seq: 3 } })).toEqual({
      deliver: false,
      reason: "owner_only",
    });
    expect(
      frameVerdict(notes, declares(notes.granted), { type: "approval.raised", data: { asked_by: "app:other" } }),
    ).toEqual({ deliver: false, reason: "owner_only" });
    expect(
      frameVerdict(notes, declares(notes.granted), { type: "approval.answered", data: { asked_by: "app:notes" } })
        .deliver,
    ).toBe(true);
  });

  it("a disabled or removed app collapses to the always-delivered tier", () => {
    expect(frameVerdict(notes, declares(notes.granted, false), { type: "app.installed", data: {} })).toEqual({
      deliver: false,
      reason: "revoked",
    });
    expect(frameVerdict(notes, null, { type: "approval.answered", data: { asked_by: "app:notes" } })).toEqual({
      deliver: false,
      reason: "revoked",
    });
    expect(frameVerdict(notes, null, { type: "hub.hello", data: {} }).deliver).toBe(true);
  });

  it("a connect grants only declarable names and says why it refuses the others", () => {
    expect(connectGrant(["app.installed", "security_log.appended", "no.such", "hub.hello", "app.installed"])).toEqual({
      granted: ["app.installed"],
      refused: [
        { event: "security_log.appended", reason: "not_declarable" },
        { event: "no.such", reason: "unclassified" },
        { event: "hub.hello", reason: "not_declarable" },
      ],
    });
  });
});
