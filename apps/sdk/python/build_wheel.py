#!/usr/bin/env python3
"""Builds personalclaw_sdk-0.1.0-py3-none-any.whl from personalclaw_verify.py, without a
network or a build backend: a wheel is a zip of the package plus dist-info METADATA, WHEEL and
RECORD (sha256 of every file). The wheel holds the one source file as the package
personalclaw_verify (its __init__.py) with a py.typed marker, so a type checker reads its inline
hints once it is installed (PEP 561 covers packages, not single-module distributions); an app
that copies the file beside its server imports the same name.

It is also this folder's PEP 517 build backend (pyproject.toml names it, in tree, with no
requirements), so `pip install apps/sdk/python` builds the same wheel offline.

The build is byte-for-byte reproducible (fixed timestamps and modes, stored entries, fixed
order), so the copy committed beside an app that depends on it can be checked against a
fresh build: apps/sdk/python/python-sdk.test.ts does exactly that.

Usage: python3 apps/sdk/python/build_wheel.py [OUT_DIR]
       python3 -m pip install apps/sdk/python
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
PACKAGE = "personalclaw_verify"

METADATA = f"""Metadata-Version: 2.1
Name: {NAME}
Version: {VERSION}
Summary: Verifies the PersonalClaw gateway's X-PersonalClaw-Proxy signature in a Python app backend.
License: MIT
Requires-Python: >=3.8
Classifier: Typing :: Typed

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
        (PACKAGE + "/__init__.py", module),
        (PACKAGE + "/py.typed", b""),
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


# PEP 517 hooks: pip calls these with this folder as the working directory.
def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return os.path.basename(build(wheel_directory))


if __name__ == "__main__":
    print(build(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_OUT))
