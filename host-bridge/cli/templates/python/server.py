"""__APP_NAME__ backend. Every route but GET /health runs only after personalclaw_verify (the
module beside this file) checked the gateway's X-PersonalClaw-Proxy signature: any local
process can reach this port, only the gateway can sign. The gateway sets PORT and
PERSONALCLAW_APP_SECRET.
"""
import json
import os
import sys
from http.server import ThreadingHTTPServer

from personalclaw_verify import SignedRequestHandler, Verifier

NAME = "__APP_NAME__"


class Handler(SignedRequestHandler):
    verifier = Verifier()

    def log_message(self, fmt, *args):
        # Method and path only: a query string may carry data.
        sys.stderr.write("%s: %s %s\n" % (NAME, self.command, self.path.split("?", 1)[0]))

    def _send(self, status, obj):
        data = json.dumps(obj).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _dispatch(self):
        path = self.path.split("?", 1)[0]
        if self.command == "GET" and path == "/health":
            return self._send(200, {"ok": True})
        # Reached from the owner's browser or an agent as /apps/__APP_NAME__/api/hello.
        if self.command == "GET" and path == "/api/hello":
            return self._send(200, {"app": NAME, "hello": "world", "verified": True})
        self._send(404, {"error": {"code": "not_found", "message": "No route %s %s." % (self.command, path)}})

    do_GET = do_POST = do_PUT = do_DELETE = _dispatch


def make_server(port):
    return ThreadingHTTPServer(("127.0.0.1", port), Handler)


def main():
    port = os.environ.get("PORT", "")
    if not (port.isascii() and port.isdigit()) or not 0 < int(port) < 65536:
        sys.stderr.write("%s: PORT is not set to a port number; the gateway assigns it.\n" % NAME)
        return 2
    server = make_server(int(port))
    print("%s listening on 127.0.0.1:%s" % (NAME, port), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
