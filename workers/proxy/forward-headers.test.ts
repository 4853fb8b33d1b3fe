// What a backend is handed of the client's headers (PROXY-02).
import { describe, expect, it } from "vitest";
import { forwardableRequestHeaders } from "./forward-headers";

describe("the client's headers a backend receives", () => {
  it("drops credentials, hop-by-hop headers, names listed in Connection, X-PersonalClaw-* and CF-*", () => {
    const incoming = new Headers([
      ["Accept", "application/json"],
      ["Authorization", "Bearer owner-token"],
      ["Cookie", "pc_session=owner"],
      ["X-Internal-Secret", "s"],
      ["X-Local-Secret", "s"],
      ["X-PersonalClaw-Work", "cli:x"],
      ["X-Session-Key", "cli:x"],
      ["Host", "127.0.0.1:1"],
      ["Content-Length", "0"],
      ["Connection", "keep-alive, X-Hop-Secret ,, Accept-Language"],
      ["Keep-Alive", "timeout=5"],
      ["Proxy-Authorization", "Basic x"],
      ["TE", "trailers"],
      ["Upgrade", "websocket"],
      ["X-Hop-Secret", "listed in Connection"],
      ["Accept-Language", "en"],
      ["X-PersonalClaw-Proxy", "1:forged:sig"],
      ["x-personalclaw-app", "other-app"],
      ["CF-Connecting-IP", "1.2.3.4"],
      ["X-Custom", "a"],
      ["x-custom", "b"],
      ["User-Agent", "test"],
    ]);
    const out = forwardableRequestHeaders(incoming);
    expect([...out]).toEqual([
      ["accept", "application/json"],
      ["user-agent", "test"],
      ["x-custom", "a, b"],
    ]);
    // The client's own object is left as it was.
    expect(incoming.get("authorization")).toBe("Bearer owner-token");
  });

  it("keeps everything else when there is no Connection header", () => {
    const out = forwardableRequestHeaders(new Headers({ Accept: "*/*", "If-None-Match": 'W/"1"' }));
    expect([...out]).toEqual([
      ["accept", "*/*"],
      ["if-none-match", 'W/"1"'],
    ]);
  });
});
