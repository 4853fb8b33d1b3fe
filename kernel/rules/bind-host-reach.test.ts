import { describe, expect, it } from "vitest";
import { bindHostWidens, bindReach } from "./bind-host-reach";
import { settingAt } from "../contracts/owner-settings";

// One value of each reach, narrowest first: loopback, one LAN address, every IPv4 interface, every interface.
const LATTICE = ["127.0.0.1", "192.168.1.20", "0.0.0.0", "::"] as const;

describe("gateway.bind_host loosens by the interfaces it reaches", () => {
  it("reads each spelling of loopback and of every interface as such", () => {
    for (const host of [
      "127.0.0.1",
      "127.1.2.3",
      "localhost",
      "LOCALHOST",
      "::1",
      "0:0:0:0:0:0:0:1",
      "::ffff:127.0.0.1",
    ])
      expect(bindReach(host), host).toEqual({ kind: "loopback" });
    for (const host of ["0.0.0.0", "0", "0.0"]) expect(bindReach(host), host).toEqual({ kind: "every-ipv4" });
    for (const host of ["::", "::0", "0:0:0:0:0:0:0:0"])
      expect(bindReach(host), host).toEqual({ kind: "every-interface" });
    expect(bindReach("192.168.1.20")).toEqual({ kind: "one", host: "192.168.1.20" });
  });

  it("over the lattice, a move up loosens and a move down or in place does not", () => {
    for (const [i, from] of LATTICE.entries()) {
      for (const [j, to] of LATTICE.entries()) {
        expect(bindHostWidens(from, to), `${from} → ${to}`).toBe(j > i);
      }
    }
  });

  it("a LAN address moved to another interface, or to a host name, loosens; one within a wildcard does not", () => {
    expect(bindHostWidens("192.168.1.20", "10.0.0.5")).toBe(true);
    expect(bindHostWidens("192.168.1.20", "gateway.lan")).toBe(true);
    expect(bindHostWidens("0.0.0.0", "fe80::1")).toBe(true);
    expect(bindHostWidens("0.0.0.0", "gateway.lan")).toBe(true);
    expect(bindHostWidens("0.0.0.0", "10.0.0.5")).toBe(false);
    expect(bindHostWidens("::", "fe80::1")).toBe(false);
    expect(bindHostWidens("gateway.lan", "GATEWAY.lan")).toBe(false);
    expect(bindHostWidens("localhost", "::1")).toBe(false);
  });

  it("is the predicate the setting's consent, presence and row use", () => {
    const spec = settingAt("gateway.bind_host")!;
    expect(spec.loosens("192.168.1.20", "0.0.0.0")).toBe(true);
    expect(spec.loosens("0.0.0.0", "::")).toBe(true);
    expect(spec.loosens("0.0.0.0", "192.168.1.20")).toBe(false);
  });
});
