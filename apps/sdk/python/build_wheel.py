#!/usr/bin/env python3
"""Builds personalclaw_sdk-0.1.0-py3-none-any.whl from personalclaw_verify.py, without a
network or a build backend: a wheel is a zip of the module plus dist-info METADATA, WHEEL and
RECORD (sha256 of every file).

The build is byte-for-byte reproducible (fixed timestamps and modes, stored entries, fixed
order), so the copy committed beside an app that depends on it can be checked against a
fresh build: apps/sdk/python/python-sdk.test.ts does exactly that.

Usage: python3 apps/sdk/python/build_wheel.py [OUT_DIR]
       (default OUT_DIR: apps/fixtures/py-echo/wheels)
"""
import base64
import hashlib
import os
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.normpath(os.path.join(HERE, "..", "..", "fixtures", "py-echo", "wheels"))

NAME = "personalclaw-sdk"
VERSION = "0.1.0"
DIST = "personalclaw_sdk-" + VERSION
WHEEL_NAME = DIST + "-py3-none-any.whl"
MODULE = "personalclaw_verify.py"

METADATA = f"""Metadata-Version: 2.1
Name: {NAME}
Version: {VERSION}
Summary: Verifies the PersonalClaw gateway's X-PersonalClaw-Proxy signature in a Python app backend.
License: MIT
Requires-Python: >=3.8

personalclaw_verify: a standard-library-only verifier for the HMAC signature the PersonalClaw
gateway puts on every request it proxies to an app backend. See personalclaw_verify.py.
"""

WHEEL = f"""Wheel-Version: 1.0
Generator: personalclaw build_wheel.py
Root-Is-Purelib: true
Tag: py3-none-any
"""


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
    return "sha256=" + digest


def _entry(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    info.external_attr = 0o100644 << 16
    info.create_system = 3
    return info


def build(out_dir: str) -> str:
    with open(os.path.join(HERE, MODULE), "rb") as f:
        module = f.read()
    files = [
        (MODULE, module),
        (DIST + ".dist-info/METADATA", METADATA.encode("utf-8")),
        (DIST + ".dist-info/WHEEL", WHEEL.encode("utf-8")),
        (DIST + ".dist-info/top_level.txt", b"personalclaw_verify\n"),
    ]
    record_name = DIST + ".dist-info/RECORD"
    record = "".join(f"{name},{_record_hash(data)},{len(data)}\n" for name, data in files) + f"{record_name},,\n"
    files.append((record_name, record.encode("utf-8")))

    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, WHEEL_NAME)
    # Written beside, then renamed: a reader never sees half a wheel.
    partial = path + ".partial"
    with zipfile.ZipFile(partial, "w") as zf:
        for name, data in files:
            zf.writestr(_entry(name), data)
    os.replace(partial, path)
    return path


if __name__ == "__main__":
    print(build(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_OUT))
