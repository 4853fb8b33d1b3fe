#!/usr/bin/env python3
"""Writes apps/sdk/test-vectors.json, the golden vectors every signer and verifier checks.

Written in Python on purpose: the gateway's signer is TypeScript, so vectors made by a
second, independent implementation catch a bug both sides of one codebase would share.
Run once and commit the JSON; `--check` exits 1 when the committed file differs from what
this script produces (the SDK tests run it), so the two cannot drift.

Usage: python3 apps/sdk/generate_test_vectors.py [--check]
"""
import base64
import hashlib
import hmac
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "test-vectors.json")

NOW = 1700000000
WINDOW_S = 60
SECRET = "9f2c6e1ab47d03c85e6f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f"
OTHER_SECRET = "0000000000000000000000000000000000000000000000000000000000000001"


def sha256_hex(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def message(ts: str, nonce: str, method: str, target: str, body: bytes) -> str:
    return f"{ts}:{nonce}:{method}:{target}:{sha256_hex(body)}"


def mac(secret: str, msg: str) -> str:
    # Key = UTF-8 bytes of the secret string, never hex-decoded.
    return hmac.new(secret.encode("utf-8"), msg.encode("utf-8"), hashlib.sha256).hexdigest()


def header(secret: str, ts, nonce: str, method: str, target: str, body: bytes) -> str:
    return f"{ts}:{nonce}:{mac(secret, message(str(ts), nonce, method, target, body))}"


def fixed_nonce(label: str) -> str:
    # A real signer draws 128 random bits per request; the vectors need fixed nonces to be
    # reproducible, and distinct ones, so one verifier can accept every accepted vector.
    return hashlib.sha256(b"personalclaw test nonce:" + label.encode("utf-8")).hexdigest()[:32]


def b64(body: bytes) -> str:
    return base64.b64encode(body).decode("ascii")


JSON_BODY = b'{"text":"hello, notes"}'

# (name, note, secret, method, target, body, chunks)
SIGNING = [
    ("get-without-query", "", SECRET, "GET", "/api/notes", b"", None),
    ("get-with-query", "", SECRET, "GET", "/api/notes?limit=10&sort=desc", b"", None),
    ("bare-question-mark",
     "A `?` with an empty query is part of the target when it is on the wire. Node's fetch "
     "does not send it, so a signer using fetch must sign the target without it.",
     SECRET, "GET", "/api/notes?", b"", None),
    ("space-percent-encoded", "", SECRET, "GET", "/api/files/my%20file.txt?q=a%20b", b"", None),
    ("space-literal",
     "Signers never encode: a literal space is signed as a space. HTTP/1.1 servers refuse it "
     "on the request line, so only the message is pinned here.",
     SECRET, "GET", "/api/files/my file.txt", b"", None),
    ("plus-literal", "A `+` is not a space: nothing is decoded.", SECRET, "GET", "/api/tags/c+a?q=a+b", b"", None),
    ("plus-percent-encoded", "", SECRET, "GET", "/api/tags/c%2Ba?q=a%2Bb", b"", None),
    ("percent-hex-lower-case", "Percent-escapes keep their case: this differs from the upper-case vector.",
     SECRET, "GET", "/api/files/caf%c3%a9", b"", None),
    ("percent-hex-upper-case", "", SECRET, "GET", "/api/files/caf%C3%A9", b"", None),
    ("non-ascii-percent-encoded", "", SECRET, "GET", "/api/files/%E2%9C%93?name=%E6%97%A5%E8%A8%98", b"", None),
    ("non-ascii-raw",
     "Raw UTF-8 in the target is signed as its UTF-8 bytes. Node's HTTP server refuses it (400); "
     "Python's http.server passes it through.",
     SECRET, "GET", "/api/files/\u2713?name=\u65e5\u8a18", b"", None),
    ("post-json", "", SECRET, "POST", "/api/notes", JSON_BODY, None),
    ("post-json-sent-chunked",
     "The same bytes as post-json sent with Transfer-Encoding: chunked: the signature covers the "
     "de-chunked body, so the header is identical.",
     SECRET, "POST", "/api/notes", JSON_BODY, [JSON_BODY[:7], JSON_BODY[7:16], JSON_BODY[16:]]),
    ("post-binary-body", "", SECRET, "POST", "/api/blob", bytes(range(256)), None),
    ("put-with-query", "", SECRET, "PUT", "/api/notes/3?rev=2", b'{"text":"edited"}', None),
    ("delete-empty-body", "", SECRET, "DELETE", "/api/notes/3", b"", None),
    ("non-hex-secret",
     "The key is the UTF-8 bytes of the secret string, whatever it contains.",
     "p\u00e4ss w\u00f6rd", "GET", "/api/notes", b"", None),
]


def signing_vectors():
    out = []
    for name, note, secret, method, target, body, chunks in SIGNING:
        # The chunked vector reuses post-json's nonce, so its header is visibly the same.
        nonce = fixed_nonce("post-json" if chunks is not None else name)
        v = {"name": name}
        if note:
            v["note"] = note
        v.update({
            "secret": secret,
            "ts": NOW,
            "nonce": nonce,
            "method": method,
            "target": target,
            "body_base64": b64(body),
        })
        if chunks is not None:
            assert b"".join(chunks) == body
            v["body_chunks_base64"] = [b64(c) for c in chunks]
        v.update({
            "body_sha256": sha256_hex(body),
            "message": message(str(NOW), nonce, method, target, body),
            "header": header(secret, NOW, nonce, method, target, body),
        })
        out.append(v)
    return out


def verifying_vectors():
    """Each: one request as a fresh verifier sees it, the verifier's clock and the expected
    answer. Every header carries its own nonce, so one verifier may also take them in order."""
    get = ("GET", "/api/notes?limit=10", b"")
    post = ("POST", "/api/notes", JSON_BODY)
    n = fixed_nonce
    good = header(SECRET, NOW, n("signed-now"), *get)
    good_ts, good_nonce, good_mac = good.split(":")
    rows = []

    def add(name, headers, expect, reason=None, req=get, now=NOW, secret=SECRET):
        method, target, body = req
        row = {"name": name, "now": now, "secret": secret, "method": method, "target": target,
               "body_base64": b64(body), "headers": headers, "expect": expect}
        if reason:
            row["reason"] = reason
        rows.append(row)

    def spelled(ts: str, nonce: str) -> str:
        # A non-canonical form carrying the HMAC of its own spelling: only the form rule can refuse it.
        return f"{ts}:{nonce}:{mac(SECRET, message(ts, nonce, *get))}"

    add("signed-now", [good], "accept")
    add("signed-post", [header(SECRET, NOW, n("signed-post"), *post)], "accept", req=post)
    add("oldest-accepted-60s-ago", [header(SECRET, NOW - 60, n("oldest-accepted-60s-ago"), *get)], "accept")
    add("newest-accepted-60s-ahead", [header(SECRET, NOW + 60, n("newest-accepted-60s-ahead"), *get)], "accept")
    add("stale-61s-ago", [header(SECRET, NOW - 61, n("stale-61s-ago"), *get)], "refuse", "timestamp_outside_window")
    add("future-61s-ahead", [header(SECRET, NOW + 61, n("future-61s-ahead"), *get)], "refuse", "timestamp_outside_window")
    add("no-header", [], "refuse", "header_missing")
    add("header-twice-both-valid", [good, good], "refuse", "header_repeated")
    add("header-twice-comma-joined", [good + ", " + good], "refuse", "header_malformed")
    add("empty-header", [""], "refuse", "header_malformed")
    add("not-a-signature", ["abc:def"], "refuse", "header_malformed")
    add("timestamp-only", [str(NOW)], "refuse", "header_malformed")
    add("mac-only", [good_mac], "refuse", "header_malformed")
    # The format before the nonce, correctly signed: refused by form, never half-accepted.
    two_part_message = f"{NOW}:GET:/api/notes?limit=10:{sha256_hex(b'')}"
    add("original-two-part-header", [f"{NOW}:{mac(SECRET, two_part_message)}"], "refuse", "header_malformed")
    for name, ts in [("timestamp-with-plus-sign", "+" + str(NOW)),
                     ("timestamp-with-leading-zero", "0" + str(NOW)),
                     ("timestamp-with-fraction", str(NOW) + ".0"),
                     ("timestamp-negative", "-" + str(NOW)),
                     ("timestamp-non-ascii-digits", "\u0661\u0667\u0660\u0660\u0660\u0660\u0660\u0660\u0660\u0660")]:
        add(name, [spelled(ts, n(name))], "refuse", "header_malformed")
    for name, nonce in [("nonce-31-chars", n("nonce-31-chars")[:31]),
                        ("nonce-33-chars", n("nonce-33-chars") + "0"),
                        ("nonce-upper-case", n("nonce-upper-case").upper()),
                        ("nonce-not-hex", "g" * 32),
                        ("nonce-empty", "")]:
        add(name, [spelled(str(NOW), nonce)], "refuse", "header_malformed")
    add("mac-upper-case-hex", [f"{good_ts}:{good_nonce}:{good_mac.upper()}"], "refuse", "header_malformed")
    add("mac-one-char-short", [good[:-1]], "refuse", "header_malformed")
    add("mac-one-char-long", [good + "0"], "refuse", "header_malformed")
    add("mac-not-hex", [f"{NOW}:{good_nonce}:{'z' * 64}"], "refuse", "header_malformed")
    add("extra-field", [good + ":00"], "refuse", "header_malformed")
    add("another-secrets-signature", [header(OTHER_SECRET, NOW, n("another-secrets-signature"), *get)],
        "refuse", "signature_mismatch")
    hex_key_nonce = n("secret-hex-decoded-as-key")
    add("secret-hex-decoded-as-key",
        [f"{NOW}:{hex_key_nonce}:"
         f"{hmac.new(bytes.fromhex(SECRET), message(str(NOW), hex_key_nonce, *get).encode(), hashlib.sha256).hexdigest()}"],
        "refuse", "signature_mismatch")
    add("tampered-body", [header(SECRET, NOW, n("tampered-body"), *post)], "refuse", "signature_mismatch",
        req=("POST", "/api/notes", b'{"text":"hello, NOTES"}'))
    add("tampered-query", [good], "refuse", "signature_mismatch", req=("GET", "/api/notes?limit=1000", b""))
    add("query-dropped", [good], "refuse", "signature_mismatch", req=("GET", "/api/notes", b""))
    add("method-changed", [good], "refuse", "signature_mismatch", req=("DELETE", "/api/notes?limit=10", b""))
    add("timestamp-moved-within-window", [f"{NOW - 1}:{good_nonce}:{good_mac}"], "refuse", "signature_mismatch")
    add("nonce-swapped", [f"{good_ts}:{n('nonce-swapped')}:{good_mac}"], "refuse", "signature_mismatch")
    add("no-secret-configured", [good], "refuse", "secret_missing", secret="")
    return rows


def verifying_sequences():
    """Each: requests given in order to ONE verifier (its replay cache carries over)."""
    get = ("GET", "/api/notes?limit=10", b"")
    n = fixed_nonce
    sequences = []

    def request(req, headers, expect, reason=None):
        method, target, body = req
        row = {"method": method, "target": target, "body_base64": b64(body), "headers": headers, "expect": expect}
        if reason:
            row["reason"] = reason
        return row

    def add(name, note, requests):
        sequences.append({"name": name, "note": note, "now": NOW, "secret": SECRET, "requests": requests})

    first = header(SECRET, NOW, n("same-request-first"), *get)
    second = header(SECRET, NOW, n("same-request-second"), *get)
    add("same-request-twice-different-nonces",
        "Two identical requests in the same second, as a page fetching one URL twice sends them: "
        "the nonces differ, so both are accepted.",
        [request(get, [first], "accept"), request(get, [second], "accept")])
    once = header(SECRET, NOW, n("same-nonce-twice"), *get)
    add("same-nonce-twice",
        "The same header again is a replay.",
        [request(get, [once], "accept"), request(get, [once], "refuse", "signature_replayed")])
    other = ("POST", "/api/notes", JSON_BODY)
    shared = n("same-nonce-different-signature")
    add("same-nonce-different-signature",
        "The cache keys on the nonce: a second request with a seen nonce is refused even though its "
        "own signature is valid.",
        [request(get, [header(SECRET, NOW, shared, *get)], "accept"),
         request(other, [header(SECRET, NOW + 1, shared, *other)], "refuse", "signature_replayed")])
    return sequences


def build() -> str:
    doc = {
        "format": {
            "header": "X-PersonalClaw-Proxy: <ts>:<nonce>:<hmac_hex>",
            "message": "<ts>:<nonce>:<METHOD>:<target>:<sha256_hex(body)>",
            "key": "UTF-8 bytes of the PERSONALCLAW_APP_SECRET string (not hex-decoded)",
            "hmac": "HMAC-SHA256, lower-case hex; upper-case hex is refused",
            "ts": "integer Unix seconds, digits only, no sign, no leading zero, no fraction",
            "nonce": "exactly 32 lower-case hex characters (128 random bits per request); the replay cache keys on it",
            "target": "request target as on the wire (path plus ?query when a ? was sent), UTF-8, never normalized",
            "window_s": WINDOW_S,
            "refusal_reasons_in_check_order": [
                "secret_missing", "header_missing", "header_repeated", "header_malformed",
                "timestamp_outside_window", "signature_mismatch", "signature_replayed",
            ],
        },
        "generated_by": "apps/sdk/generate_test_vectors.py",
        "signing": signing_vectors(),
        "verifying": verifying_vectors(),
        "verifying_sequences": verifying_sequences(),
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def main(argv):
    text = build()
    if "--check" in argv:
        with open(OUT, encoding="utf-8") as f:
            if f.read() != text:
                sys.stderr.write("test-vectors.json differs from generate_test_vectors.py; rerun it\n")
                return 1
        return 0
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
