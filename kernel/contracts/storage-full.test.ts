import { describe, expect, it } from "vitest";
import { storageFullReason } from "./storage-full";

describe("storageFullReason", () => {
  it("names a Node ENOSPC or EIO error by its code", () => {
    expect(storageFullReason(Object.assign(new Error("write failed"), { code: "ENOSPC" }))).toBe("ENOSPC");
    expect(storageFullReason(Object.assign(new Error("read failed"), { code: "EIO" }))).toBe("EIO");
  });
  it("recognises SQLite's full-disk text as workerd forwards it", () => {
    expect(storageFullReason(new Error("SQLITE_FULL: database or disk is full"))).toBe("SQLITE_FULL");
    expect(storageFullReason(new Error("database or disk is full"))).toBe("database or disk is full");
  });
  it("looks through a cause", () => {
    expect(
      storageFullReason(new Error("install failed", { cause: Object.assign(new Error("x"), { code: "ENOSPC" }) })),
    ).toBe("ENOSPC");
  });
  it("answers null for any other failure", () => {
    expect(storageFullReason(Object.assign(new Error("nope"), { code: "ENOENT" }))).toBeNull();
    expect(storageFullReason(new Error("SQLITE_CONSTRAINT: UNIQUE failed"))).toBeNull();
    expect(storageFullReason(undefined)).toBeNull();
  });
});
