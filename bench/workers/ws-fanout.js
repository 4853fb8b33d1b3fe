// Bare workerd baseline for the events section: one Durable Object holding hibernatable
// WebSockets that sends every POSTed frame to all of them (no scope, no auth) and echoes what a
// socket sends it. The product's EventHub does the same fan-out behind its auth and filter.
import { DurableObject } from "cloudflare:workers";

export class Hub extends DurableObject {
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === "/ws") {
      const pair = new WebSocketPair();
      this.ctx.acceptWebSocket(pair[1]);
      return new Response(null, { status: 101, webSocket: pair[0] });
    }
    if (url.pathname === "/publish") {
      const text = await request.text();
      let delivered = 0;
      for (const ws of this.ctx.getWebSockets()) {
        ws.send(text);
        delivered++;
      }
      return Response.json({ delivered });
    }
    return new Response("not found", { status: 404 });
  }

  webSocketMessage(ws, message) {
    ws.send(message);
  }

  webSocketClose(ws, code) {
    ws.close(code === 1005 || code === 1006 ? 1000 : code);
  }
}

export default {
  fetch(request, env) {
    if (new URL(request.url).pathname === "/ready") return new Response("ok");
    return env.HUB.get(env.HUB.idFromName("hub")).fetch(request);
  },
};
