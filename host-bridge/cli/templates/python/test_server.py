"""Run with `python3 -m unittest`: the backend answers a request signed the way the gateway
signs and refuses one that is not signed."""
import hashlib
import hmac
import os
import secrets
import threading
import time
import unittest
import urllib.error
import urllib.request

SECRET = "a-test-secret"
os.environ["PERSONALCLAW_APP_SECRET"] = SECRET

import server  # noqa: E402  (reads the secret at import)


def signature(method, target, body=b""):
    ts = str(int(time.time()))
    nonce = secrets.token_hex(16)
    message = "%s:%s:%s:%s:%s" % (ts, nonce, method, target, hashlib.sha256(body).hexdigest())
    mac = hmac.new(SECRET.encode("utf-8"), message.encode("utf-8"), hashlib.sha256).hexdigest()
    return "%s:%s:%s" % (ts, nonce, mac)


class BackendTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.httpd = server.make_server(0)
        cls.base = "http://127.0.0.1:%d" % cls.httpd.server_address[1]
        threading.Thread(target=cls.httpd.serve_forever, daemon=True).start()

    @classmethod
    def tearDownClass(cls):
        cls.httpd.shutdown()

    def test_a_signed_request_is_answered(self):
        req = urllib.request.Request(self.base + "/api/hello", headers={"X-PersonalClaw-Proxy": signature("GET", "/api/hello")})
        with urllib.request.urlopen(req) as res:
            self.assertEqual(res.status, 200)

    def test_an_unsigned_request_is_refused(self):
        with self.assertRaises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(self.base + "/api/hello")
        self.assertEqual(refused.exception.code, 401)


if __name__ == "__main__":
    unittest.main()
