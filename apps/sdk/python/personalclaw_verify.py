"""Verifies the PersonalClaw gateway's X-PersonalClaw-Proxy signature in a Python app backend.

A backend listens on 127.0.0.1, where any local process can reach its port directly; the
signature proves a request came through the gateway's proxy, which checked the owner's
credential and the app's permissions first. It does not encrypt loopback and does not
resist a process that can read the app's secret.

Format (the same as apps/sdk/node and the gateway's signer; the reasons are in
docs/design/proxy-signature.md):
    X-PersonalClaw-Proxy: <ts>:<nonce>:<hmac_hex>
    nonce    = 32 lower-case hex characters, fresh random bits for every request
    hmac_hex = lower-case hex HMAC-SHA256(UTF-8 bytes of PERSONALCLAW_APP_SECRET,
               b"<ts>:<nonce>:<METHOD>:<target>:<sha256_hex(body)>")
Each nonce is accepted once within the window.

Standard library only, one file. Usage with http.server::

    from personalclaw_verify import SignedRequestHandler
    class Handler(SignedRequestHandler):
        def do_POST(self):          # runs only for a verified request
            data = self.raw_body     # the body, read once

Typed inline (PEP 484); the installed package carries py.typed (PEP 561).
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Callable, ClassVar, Dict, Iterable, List, Mapping, Optional, Protocol, Tuple, Union

#: Why a request was refused: "secret_missing", "header_missing", "header_repeated",
#: "header_malformed", "timestamp_outside_window", "signature_mismatch", "signature_replayed",
#: "body_too_large" or "body_framing_invalid".
RefusalReason = str
#: Called once per refusal with the reason and {"method", "path"}.
RefusalCallback = Callable[[RefusalReason, Mapping[str, str]], None]
class HTTPMessageLike(Protocol):
    """What header_values reads of an http.client.HTTPMessage: every value of one header."""

    def get_all(self, name: str) -> Optional[List[str]]: ...


#: A request target as the server read it: text (http.server's latin-1 str) or raw bytes.
Target = Union[str, bytes, bytearray]

__all__ = [
    "PROXY_SIGNATURE_HEADER",
    "REFUSAL_STATUS",
    "REFUSAL_BODY",
    "TOO_LARGE_STATUS",
    "TOO_LARGE_BODY",
    "Verifier",
    "SignedRequestHandler",
]

PROXY_SIGNATURE_HEADER = "X-PersonalClaw-Proxy"
REFUSAL_STATUS = 401
REFUSAL_BODY = b'{"error":{"code":"proxy_signature_invalid","message":"This request was not signed by the gateway."}}'
TOO_LARGE_STATUS = 413
TOO_LARGE_BODY = b'{"error":{"code":"body_too_large","message":"The request body is larger than this backend accepts."}}'

# Canonical only: ASCII digits without sign, leading zero or fraction, then exactly 32
# lower-case hex digits of nonce, then exactly 64 lower-case hex digits of HMAC. One spelling
# per signature keeps the replay cache sound: if `0<ts>` or an upper-case nonce were
# accepted, a captured signature could be replayed in a spelling the cache has not seen.
# [0-9], not \d, which also matches non-ASCII digits.
_SIGNATURE_SHAPE = re.compile(r"(0|[1-9][0-9]{0,14}):([0-9a-f]{32}):([0-9a-f]{64})")
_DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
# Optional whitespace around a header value is not part of it (RFC 9110 5.5).
_OWS = " \t"


def _log_refusal(reason: RefusalReason, info: Mapping[str, str]) -> None:
    # A backend cannot reach the gateway's security log, so a denial is one structured
    # stderr line. The path only: a query string may carry data.
    sys.stderr.write(json.dumps({"level": "warning", "event": "proxy_signature_refused", "reason": reason,
                                 "method": info["method"], "path": info["path"]}) + "\n")
    sys.stderr.flush()


def _target_bytes(target: Target) -> bytes:
    # http.server decodes the request line as latin-1, so re-encoding latin-1 gives back the
    # wire bytes; a str with a character above U+00FF did not come off a wire: UTF-8.
    if isinstance(target, (bytes, bytearray)):
        return bytes(target)
    try:
        return target.encode("latin-1")
    except UnicodeEncodeError:
        return target.encode("utf-8")


def _path_of(target: Target) -> str:
    if isinstance(target, (bytes, bytearray)):
        target = bytes(target).decode("latin-1")
    return target.split("?", 1)[0]


class Verifier:
    """Verifies signatures. With no secret (unset or empty) it fails closed: it says so once
    on stderr and refuses every signed request."""

    def __init__(self, secret: Optional[str] = None, health_path: Optional[str] = "/health", window_s: int = 60,
                 now: Optional[Callable[[], int]] = None, max_body_bytes: int = _DEFAULT_MAX_BODY_BYTES,
                 on_refusal: Optional[RefusalCallback] = None) -> None:
        if secret is None:
            secret = os.environ.get("PERSONALCLAW_APP_SECRET", "")
        self.has_secret = isinstance(secret, str) and len(secret) > 0
        if not self.has_secret:
            sys.stderr.write("personalclaw_verify: PERSONALCLAW_APP_SECRET is missing or empty; every request "
                             "except the health check will be refused with 401.\n")
            sys.stderr.flush()
        self._key: Optional[bytes] = secret.encode("utf-8") if self.has_secret and secret else None
        self.health_path = health_path
        self.window_s = window_s
        self._now: Callable[[], int] = now or (lambda: int(time.time()))
        self.max_body_bytes = max_body_bytes
        self._on_refusal: RefusalCallback = on_refusal or _log_refusal
        # Nonces of signatures already accepted, with the second after which the window
        # refuses their signature anyway. Keyed on the nonce, not the HMAC: a nonce is spent
        # once, whatever request it signed. Only verified signatures enter.
        self._seen: Dict[str, int] = {}
        self._pruned_at: Optional[int] = None
        # ThreadingHTTPServer verifies on many threads: check-and-remember is one step, or
        # two threads could both accept the same signature.
        self._lock = threading.Lock()

    @staticmethod
    def header_values(headers: Union[Iterable[Tuple[str, str]], "HTTPMessageLike"]) -> List[str]:
        """Every X-PersonalClaw-Proxy value in a list of (name, value) pairs, or an
        http.client.HTTPMessage."""
        if hasattr(headers, "get_all"):
            return list(headers.get_all(PROXY_SIGNATURE_HEADER) or [])
        return [v for (k, v) in headers if k.lower() == PROXY_SIGNATURE_HEADER.lower()]

    def is_exempt(self, method: str, target: Target) -> bool:
        """The health check needs no signature: GET or HEAD on exactly health_path, compared
        raw, so `/health/../api/x` or `/%68ealth` still needs one."""
        return (isinstance(self.health_path, str) and method in ("GET", "HEAD")
                and _path_of(target) == self.health_path)

    def precheck(self, header_values: List[str], now: Optional[int] = None) -> Optional[RefusalReason]:
        """What can be checked before the body is read: a refusal reason, or None."""
        t = self._now() if now is None else now
        if not self.has_secret:
            return "secret_missing"
        if len(header_values) == 0:
            return "header_missing"
        # Two headers are refused even if one is valid: parsers disagree on which one wins.
        if len(header_values) > 1:
            return "header_repeated"
        m = _SIGNATURE_SHAPE.fullmatch(str(header_values[0]).strip(_OWS))
        if m is None:
            return "header_malformed"
        if abs(t - int(m.group(1))) > self.window_s:
            return "timestamp_outside_window"
        return None

    def refusal_reason(self, method: str, target: Target,
                       headers: Union[Iterable[Tuple[str, str]], "HTTPMessageLike"],
                       body: Optional[bytes]) -> Optional[RefusalReason]:
        """None when the request is verified (and remembers its nonce), else the reason."""
        t = self._now()
        values = self.header_values(headers)
        early = self.precheck(values, t)
        if early is not None:
            return early
        shape = _SIGNATURE_SHAPE.fullmatch(str(values[0]).strip(_OWS))
        assert shape is not None and self._key is not None  # precheck refused anything else
        ts_text, nonce, mac_hex = shape.groups()
        message = b"".join([
            ("%s:%s:%s:" % (ts_text, nonce, method)).encode("latin-1"),
            _target_bytes(target),
            b":" + hashlib.sha256(body or b"").hexdigest().encode("ascii"),
        ])
        expected = hmac.new(self._key, message, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, mac_hex):
            return "signature_mismatch"
        with self._lock:
            self._prune(t)
            if nonce in self._seen:
                return "signature_replayed"
            self._seen[nonce] = int(ts_text) + self.window_s
        return None

    def verify(self, method: str, target: Target, headers: Union[Iterable[Tuple[str, str]], "HTTPMessageLike"],
               body: Optional[bytes]) -> bool:
        """True only for a request the gateway signed, whose nonce is seen for the first time."""
        return self.refusal_reason(method, target, headers, body) is None

    def refuse(self, reason: RefusalReason, method: str, target: Target) -> None:
        self._on_refusal(reason, {"method": method, "path": _path_of(target)})

    def _prune(self, t: int) -> None:
        if t == self._pruned_at:
            return
        self._pruned_at = t
        for nonce in [n for (n, until) in self._seen.items() if until < t]:
            del self._seen[nonce]


class _BodyTooLarge(Exception):
    pass


class _BadFraming(Exception):
    pass


class SignedRequestHandler(BaseHTTPRequestHandler):
    """A BaseHTTPRequestHandler whose do_* methods run only for a verified request (or the
    health check). The body is read once, before dispatch, and is on self.raw_body.

    Subclasses may set `verifier` to a shared Verifier; by default one is created per
    handler class from the environment, so the replay cache is shared across requests."""

    verifier: ClassVar[Optional[Verifier]] = None
    raw_body: bytes

    @classmethod
    def _class_verifier(cls) -> Verifier:
        if cls.__dict__.get("verifier") is None:
            cls.verifier = Verifier()
        return cls.verifier  # type: ignore[return-value]

    def parse_request(self) -> bool:
        if not super().parse_request():
            return False
        verifier = self._class_verifier()
        method, target = self.command, self.path
        exempt = verifier.is_exempt(method, target)
        if not exempt:
            early = verifier.precheck(Verifier.header_values(self.headers))
            if early is not None:
                return self._refuse(verifier, early, method, target)
        try:
            self.raw_body = self._read_body(verifier.max_body_bytes)
        except _BodyTooLarge:
            if not exempt:
                verifier.refuse("body_too_large", method, target)
            self._answer(TOO_LARGE_STATUS, TOO_LARGE_BODY)
            return False
        except _BadFraming:
            return self._refuse(verifier, "body_framing_invalid", method, target)
        if not exempt:
            reason = verifier.refusal_reason(method, target, self.headers, self.raw_body)
            if reason is not None:
                return self._refuse(verifier, reason, method, target)
        return True

    def _refuse(self, verifier: Verifier, reason: RefusalReason, method: str, target: Target) -> bool:
        verifier.refuse(reason, method, target)
        self._answer(REFUSAL_STATUS, REFUSAL_BODY)
        return False

    def _answer(self, status: int, body: bytes) -> None:
        # Closes the connection: a refused request's body may be left unread.
        self.close_connection = True
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def _read_body(self, limit: int) -> bytes:
        encodings = self.headers.get_all("Transfer-Encoding") or []
        lengths = self.headers.get_all("Content-Length") or []
        # Both framings, or two lengths, is how a request is smuggled past one parser.
        if encodings and lengths or len(lengths) > 1:
            raise _BadFraming()
        if encodings:
            if [e.strip().lower() for e in encodings] != ["chunked"]:
                raise _BadFraming()
            return self._read_chunked(limit)
        if not lengths:
            return b""
        text = lengths[0].strip(_OWS)
        if not re.fullmatch(r"[0-9]{1,15}", text):
            raise _BadFraming()
        length = int(text)
        if length > limit:
            raise _BodyTooLarge()
        body = self.rfile.read(length)
        if len(body) != length:
            raise _BadFraming()
        return body

    def _read_chunked(self, limit: int) -> bytes:
        parts: List[bytes] = []
        size = 0
        while True:
            line = self.rfile.readline(1026)
            if not line.endswith(b"\r\n"):
                raise _BadFraming()
            size_text = line[:-2].split(b";", 1)[0].strip(b" \t")
            if not re.fullmatch(rb"[0-9A-Fa-f]{1,15}", size_text):
                raise _BadFraming()
            n = int(size_text, 16)
            if n == 0:
                break
            size += n
            if size > limit:
                raise _BodyTooLarge()
            chunk = self.rfile.read(n)
            if len(chunk) != n or self.rfile.read(2) != b"\r\n":
                raise _BadFraming()
            parts.append(chunk)
        # Trailer section, ending with an empty line.
        while True:
            line = self.rfile.readline(8192)
            if line in (b"\r\n", b"\n"):
                break
            if not line:
                raise _BadFraming()
        return b"".join(parts)
