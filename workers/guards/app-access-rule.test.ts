// The app permission gate's rule, case by case (the end-to-end suite proves it is wired).
import { describe, expect, it } from "vitest";
import { appAccessRefusal, isUnderPrefix } from "./app-access-rule";

const reserved = new Set(["installs", "message", "preview"]);
const declared = { kind: "app-may", why: "test" } as const;
const owned = { kind: "app-may", why: "test", owns: "name" } as const;
const grants = (api: string[] | null) => ({
  enabled: true,
  api,
  appMessaging: [],
  approvals: false,
  config: { read: [], write: [] },
});

describe("the app permission gate", () => {
  it("matches declared prefixes at a path boundary on the pathname only", () => {
    expect(isUnderPrefix("/api/status", "/api/status")).toBe(true);
    expect(isUnderPrefix("/api/status/x", "/api/status")).toBe(true);
    expect(isUnderPrefix("/api/statusx", "/api/status")).toBe(false);
    expect(isUnderPrefix("/api/notes", "/api/notes/")).toBe(true);
    expect(isUnderPrefix("/api/notesx", "/api/notes/")).toBe(false);
    expect(isUnderPrefix("/anything", "")).toBe(false);
    expect(isUnderPrefix("/anything", "*")).toBe(false);
  });

  it("lets an app reach a declared prefix and refuses an undeclared one", () => {
    expect(
      appAccessRefusal({ authz: declared }, "/api/status", {}, "foo", grants(["/api/status"]), reserved),
    ).toBeNull();
    expect(appAccessRefusal({ authz: declared }, "/api/other", {}, "foo", grants(["/api/status"]), reserved)).toBe(
      "not_declared",
    );
  });

  it("denies everything when the api grant is not a list", () => {
    expect(appAccessRefusal({ authz: declared }, "/api/status", {}, "foo", grants(null), reserved)).toBe(
      "grant_not_a_list",
    );
  });

  it("never lets a declaration widen an owner-only row", () => {
    expect(
      appAccessRefusal({ authz: { kind: "owner" } }, "/api/security/events", {}, "foo", grants(["/api/"]), reserved),
    ).toBe("owner_only");
  });

  it("holds an owning row to the app's own name: foo never reaches foo-bar", () => {
    expect(
      appAccessRefusal({ authz: owned }, "/api/apps/foo", { name: "foo" }, "foo", grants([]), reserved),
    ).toBeNull();
    expect(
      appAccessRefusal(
        { authz: owned },
        "/api/apps/foo-bar",
        { name: "foo-bar" },
        "foo",
        grants(["/api/apps/foo-bar"]),
        reserved,
      ),
    ).toBe("not_its_own");
  });

  it("gives implicit self-ownership only at a path boundary and never for a reserved name", () => {
    expect(appAccessRefusal({ authz: declared }, "/api/apps/foo/things", {}, "foo", grants([]), reserved)).toBeNull();
    expect(appAccessRefusal({ authz: declared }, "/api/apps/foo-bar/things", {}, "foo", grants([]), reserved)).toBe(
      "not_declared",
    );
    expect(appAccessRefusal({ authz: declared }, "/api/apps/message/x", {}, "message", grants([]), reserved)).toBe(
      "not_declared",
    );
  });

  it("lets an app token reach /api/ws implicitly and nothing else undeclared", () => {
    expect(appAccessRefusal({ authz: declared }, "/api/ws", {}, "foo", grants([]), reserved)).toBeNull();
    expect(appAccessRefusal({ authz: declared }, "/api/status", {}, "foo", grants([]), reserved)).toBe("not_declared");
  });

  it("refuses a disabled app everything", () => {
    expect(
      appAccessRefusal(
        { authz: owned },
        "/api/apps/foo",
        { name: "foo" },
        "foo",
        { enabled: false, api: [], appMessaging: [], approvals: false, config: { read: [], write: [] } },
        reserved,
      ),
    ).toBe("app_not_enabled");
  });
});
