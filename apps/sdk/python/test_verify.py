"""Unit tests for personalclaw_verify (stdlib unittest). npm test runs them through
apps/sdk/python/python-sdk.test.ts; the HTTP behaviour shared with the Node SDK is in
apps/sdk/signed-backends.test.ts.

    cd apps/sdk/python && python3 -m unittest -v test_verify
"""
import base64
import contextlib
import hashlib
import hmac
import http.client
import io
import json
import os
import sys
import threading
import unittest
from http.server import ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import personalclaw_verify as pv  # noqa: E402

VECTORS_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test-vectors.json")
with open(VECTORS_PATH, encoding="utf-8") as f:
    VECTORS = json.load(f)

SECRET = "a test secret"


def sign(secret, ts, method, target, body, nonce=None):
    """A header as the gateway signs it: a fresh random nonce unless one is given."""
    nonce = os.urandom(16).hex() if nonce is None else nonce
    msg = "%s:%s:%s:%s:%s" % (ts, nonce, method, target, hashlib.sha256(body).hexdigest())
    return "%s:%s:%s" % (ts, nonce, hmac.new(secret.encode(), msg.encode(), hashlib.sha256).hexdigest())


def quiet_verifier(**kw):
    reasons = []
    kw.setdefault("on_refusal", lambda reason, info: reasons.append(reason))
    with contextlib.redirect_stderr(io.StringIO()) as err:
        v = pv.Verifier(**kw)
    return v, reasons, err.getvalue()


class GoldenVectors(unittest.TestCase):
    def test_every_verifying_vector_is_answered_as_expected_for_its_reason(self):
        for v in VECTORS["verifying"]:
            with self.subTest(v["name"]):
                verifier, _, _ = quiet_verifier(secret=v["secret"], now=lambda n=v["now"]: n)
                headers = [(pv.PROXY_SIGNATURE_HEADER, h) for h in v["headers"]]
                reason = verifier.refusal_reason(v["method"], v["target"], headers, base64.b64decode(v["body_base64"]))
                self.assertEqual(reason, None if v["expect"] == "accept" else v["reason"])

    def test_every_verifying_sequence_is_answered_in_order_by_one_verifier(self):
        for seq in VECTORS["verifying_sequences"]:
            with self.subTest(seq["name"]):
                verifier, _, _ = quiet_verifier(secret=seq["secret"], now=lambda n=seq["now"]: n)
                answers = []
                for r in seq["requests"]:
                    headers = [(pv.PROXY_SIGNATURE_HEADER, h) for h in r["headers"]]
                    answers.append(verifier.refusal_reason(r["method"], r["target"], headers, base64.b64decode(r["body_base64"])))
                self.assertEqual(answers, [None if r["expect"] == "accept" else r["reason"] for r in seq["requests"]])

    def test_the_vectors_cover_the_nonce_rules(self):
        names = {v["name"] for v in VECTORS["verifying"]} | {s["name"] for s in VECTORS["verifying_sequences"]}
        for name in ["nonce-31-chars", "nonce-upper-case", "nonce-not-hex", "nonce-swapped",
                     "same-request-twice-different-nonces", "same-nonce-twice", "same-nonce-different-signature"]:
            self.assertIn(name, names)

    def test_every_signing_vector_is_accepted_including_targets_http_cannot_carry(self):
        for v in VECTORS["signing"]:
            with self.subTest(v["name"]):
                verifier, _, _ = quiet_verifier(secret=v["secret"], now=lambda n=v["ts"]: n)
                headers = [("x-personalclaw-proxy", v["header"])]
                self.assertTrue(verifier.verify(v["method"], v["target"], headers, base64.b64decode(v["body_base64"])))

    def test_a_raw_utf8_target_read_as_latin1_off_the_wire_still_verifies(self):
        v = next(x for x in VECTORS["signing"] if x["name"] == "non-ascii-raw")
        verifier, _, _ = quiet_verifier(secret=v["secret"], now=lambda: v["ts"])
        as_http_server_sees_it = v["target"].encode("utf-8").decode("latin-1")
        self.assertTrue(verifier.verify("GET", as_http_server_sees_it, [(pv.PROXY_SIGNATURE_HEADER, v["header"])], b""))


class VerifierRules(unittest.TestCase):
    def test_a_signature_is_accepted_once_and_its_replay_refused(self):
        verifier, _, _ = quiet_verifier(secret=SECRET, now=lambda: 500)
        headers = [(pv.PROXY_SIGNATURE_HEADER, sign(SECRET, 500, "POST", "/api/x", b"{}"))]
        self.assertIsNone(verifier.refusal_reason("POST", "/api/x", headers, b"{}"))
        self.assertEqual(verifier.refusal_reason("POST", "/api/x", headers, b"{}"), "signature_replayed")

    def test_the_same_request_twice_in_one_second_is_accepted_twice_with_fresh_nonces(self):
        verifier, _, _ = quiet_verifier(secret=SECRET, now=lambda: 500)
        for _ in range(2):
            headers = [(pv.PROXY_SIGNATURE_HEADER, sign(SECRET, 500, "GET", "/api/x", b""))]
            self.assertIsNone(verifier.refusal_reason("GET", "/api/x", headers, b""))

    def test_a_spent_nonce_is_refused_even_on_another_validly_signed_request(self):
        verifier, _, _ = quiet_verifier(secret=SECRET, now=lambda: 500)
        nonce = "0123456789abcdef" * 2
        first = [(pv.PROXY_SIGNATURE_HEADER, sign(SECRET, 500, "GET", "/api/x", b"", nonce))]
        other = [(pv.PROXY_SIGNATURE_HEADER, sign(SECRET, 501, "POST", "/api/y", b"{}", nonce))]
        self.assertIsNone(verifier.refusal_reason("GET", "/api/x", first, b""))
        self.assertEqual(verifier.refusal_reason("POST", "/api/y", other, b"{}"), "signature_replayed")

    def test_a_nonce_not_exactly_32_lower_case_hex_is_refused_as_malformed(self):
        verifier, _, _ = quiet_verifier(secret=SECRET, now=lambda: 500)
        for nonce in ["a" * 31, "a" * 33, "A" * 32, "g" * 32, "\u0661" * 32, "", "a" * 30 + "\n"]:
            with self.subTest(nonce=nonce):
                headers = [(pv.PROXY_SIGNATURE_HEADER, sign(SECRET, 500, "GET", "/api/x", b"", nonce))]
                self.assertEqual(verifier.refusal_reason("GET", "/api/x", headers, b""), "header_malformed")

    def test_an_accepted_signature_is_forgotten_only_once_the_window_refuses_it(self):
        clock = [500]
        verifier, _, _ = quiet_verifier(secret=SECRET, now=lambda: clock[0])
        headers = [(pv.PROXY_SIGNATURE_HEADER, sign(SECRET, 500, "GET", "/api/x", b""))]
        self.assertTrue(verifier.verify("GET", "/api/x", headers, b""))
        clock[0] = 560
        self.assertEqual(verifier.refusal_reason("GET", "/api/x", headers, b""), "signature_replayed")
        clock[0] = 561
        self.assertEqual(verifier.refusal_reason("GET", "/api/x", headers, b""), "timestamp_outside_window")
        # The next accepted signature sweeps the expired one out: the cache stays bounded.
        fresh = [(pv.PROXY_SIGNATURE_HEADER, sign(SECRET, 561, "GET", "/api/y", b""))]
        self.assertTrue(verifier.verify("GET", "/api/y", fresh, b""))
        self.assertEqual(list(verifier._seen), [fresh[0][1].split(":")[1]])  # the nonce

    def test_the_secret_comes_from_the_environment_by_default(self):
        old = os.environ.get("PERSONALCLAW_APP_SECRET")
        os.environ["PERSONALCLAW_APP_SECRET"] = "from the environment"
        try:
            verifier, _, log = quiet_verifier(now=lambda: 7)
        finally:
            if old is None:
                del os.environ["PERSONALCLAW_APP_SECRET"]
            else:
                os.environ["PERSONALCLAW_APP_SECRET"] = old
        self.assertEqual(log, "")
        headers = [(pv.PROXY_SIGNATURE_HEADER, sign("from the environment", 7, "GET", "/api/x", b""))]
        self.assertTrue(verifier.verify("GET", "/api/x", headers, b""))

    def test_a_missing_secret_is_announced_at_startup_and_refuses_everything(self):
        old = os.environ.pop("PERSONALCLAW_APP_SECRET", None)
        try:
            verifier, _, log = quiet_verifier(now=lambda: 7)
        finally:
            if old is not None:
                os.environ["PERSONALCLAW_APP_SECRET"] = old
        self.assertIn("PERSONALCLAW_APP_SECRET is missing or empty", log)
        headers = [(pv.PROXY_SIGNATURE_HEADER, sign("", 7, "GET", "/api/x", b""))]
        self.assertEqual(verifier.refusal_reason("GET", "/api/x", headers, b""), "secret_missing")

    def test_odd_header_values_are_refused_as_malformed_never_raised(self):
        verifier, _, _ = quiet_verifier(secret=SECRET, now=lambda: 1)
        nonce = "a" * 32
        for value in ["1:" + nonce + ":" + "a" * 64 + "\n", "1:" + nonce + ":" + "\u00e9" * 64,
                      "1:" + nonce + ":" + "a" * 10000, "\x00", "\u0661:" + nonce + ":" + "a" * 64,
                      "1:" + "a" * 64]:
            with self.subTest(value=value[:12]):
                self.assertEqual(verifier.refusal_reason("GET", "/api/x", [(pv.PROXY_SIGNATURE_HEADER, value)], b""),
                                 "header_malformed")

    def test_a_refusal_is_one_json_warning_line_naming_the_path_not_the_query(self):
        with contextlib.redirect_stderr(io.StringIO()) as err:
            pv.Verifier(secret=SECRET).refuse("header_missing", "GET", "/api/notes?token=private")
        self.assertEqual([json.loads(line) for line in err.getvalue().splitlines()], [
            {"level": "warning", "event": "proxy_signature_refused", "reason": "header_missing", "method": "GET",
             "path": "/api/notes"},
        ])


class HandlerDispatch(unittest.TestCase):
    """A real ThreadingHTTPServer on 127.0.0.1 with a do_POST that counts its runs."""

    def setUp(self):
        self.runs = []
        self.verifier, self.reasons, _ = quiet_verifier(secret=SECRET, now=lambda: 1000)
        runs, verifier = self.runs, self.verifier

        class Handler(pv.SignedRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                runs.append(self.raw_body)
                self.send_response(204)
                self.end_headers()

        Handler.verifier = verifier
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def tearDown(self):
        self.server.shutdown()
        self.server.server_close()

    def post(self, headers, body):
        conn = http.client.HTTPConnection("127.0.0.1", self.server.server_address[1], timeout=10)
        conn.putrequest("POST", "/api/notes")
        for k, v in headers:
            conn.putheader(k, v)
        conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        r = conn.getresponse()
        out = (r.status, r.read())
        conn.close()
        return out

    def test_a_verified_request_reaches_the_route_with_its_body_read_once(self):
        body = b'{"text":"hi"}'
        status, _ = self.post([(pv.PROXY_SIGNATURE_HEADER, sign(SECRET, 1000, "POST", "/api/notes", body))], body)
        self.assertEqual(status, 204)
        self.assertEqual(self.runs, [body])

    def test_a_tampered_body_is_refused_with_the_fixed_body_and_the_route_never_runs(self):
        header = sign(SECRET, 1000, "POST", "/api/notes", b'{"text":"hi"}')
        status, answer = self.post([(pv.PROXY_SIGNATURE_HEADER, header)], b'{"text":"HI"}')
        self.assertEqual((status, answer), (401, pv.REFUSAL_BODY))
        self.assertEqual(self.runs, [])
        self.assertEqual(self.reasons, ["signature_mismatch"])

    def test_two_signature_headers_are_refused_even_when_both_are_valid(self):
        body = b"{}"
        header = sign(SECRET, 1000, "POST", "/api/notes", body)
        status, answer = self.post([(pv.PROXY_SIGNATURE_HEADER, header), (pv.PROXY_SIGNATURE_HEADER, header)], body)
        self.assertEqual((status, answer), (401, pv.REFUSAL_BODY))
        self.assertEqual(self.runs, [])
        self.assertEqual(self.reasons, ["header_repeated"])

    def test_content_length_and_chunked_together_are_refused_as_smuggling(self):
        body = b"{}"
        header = sign(SECRET, 1000, "POST", "/api/notes", body)
        status, answer = self.post([(pv.PROXY_SIGNATURE_HEADER, header), ("Transfer-Encoding", "chunked")], body)
        self.assertEqual((status, answer), (401, pv.REFUSAL_BODY))
        self.assertEqual(self.runs, [])
        self.assertEqual(self.reasons, ["body_framing_invalid"])


if __name__ == "__main__":
    unittest.main()
