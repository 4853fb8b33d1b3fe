"""The Python side of apps/sdk/signed-backends.test.ts: a real http.server backend behind
SignedRequestHandler whose /api/* route counts its runs, so the suite can prove a refused
request never reached it.

Usage: PERSONALCLAW_APP_SECRET=... python3 suite_server.py <now|-> <max_body_bytes>
Prints `listening <port>` once bound; refusals go to stderr as JSON lines.
"""
import base64
import json
import os
import sys
from http.server import ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from personalclaw_verify import SignedRequestHandler, Verifier  # noqa: E402

hits = 0


def main():
    now_arg, max_body = sys.argv[1], int(sys.argv[2])
    now = None if now_arg == "-" else (lambda fixed=int(now_arg): fixed)

    class Handler(SignedRequestHandler):
        verifier = Verifier(now=now, max_body_bytes=max_body)

        def log_message(self, *args):
            pass

        def _reply(self, obj):
            data = json.dumps(obj).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _route(self):
            global hits
            if self.path.split("?", 1)[0] == "/health":
                return self._reply({"ok": True, "hits": hits})
            hits += 1
            self._reply({"method": self.command, "target": self.path,
                         "bodyBase64": base64.b64encode(self.raw_body).decode()})

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _route

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print("listening %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
