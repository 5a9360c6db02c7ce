#!/usr/bin/env python3
"""Writes the Python package's wheel around an extension module built already
(scripts/dist: the engine compiled once for the CLI, the Node addon and this).

    python3 scripts/wheel.py --native lib_native.so --tag cp39-abi3-manylinux_2_17_x86_64 \
        [--tag ...] --out DIR

The metadata comes from python/pyproject.toml ([project]: name, summary,
Python range, licence, classifiers, extras) and python/README.md, the version
from python/Cargo.toml; the files are python/tribunal_engine/ and the module as
tribunal_engine/_native.abi3.so. The archive is a wheel as PEP 427 and the
core metadata specification define it (RECORD with each file's SHA-256, which
pip checks on install), written reproducibly (entries in name order, one fixed
time). Needs Python 3.11 or newer (tomllib).
"""

import argparse
import base64
import hashlib
import re
import sys
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = ROOT / "python"
# Zip entries' time: the format's earliest (1980-01-01), so the bytes depend on
# the contents only.
EPOCH = (1980, 1, 1, 0, 0, 0)


def version() -> str:
    cargo = tomllib.loads((PYTHON / "Cargo.toml").read_text(encoding="utf-8"))
    return cargo["package"]["version"]


def metadata(project: dict, version: str) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {version}",
        f"Summary: {project['description']}",
        f"License: {project['license']['text']}",
        f"Requires-Python: {project['requires-python']}",
    ]
    lines += [f"Classifier: {c}" for c in project.get("classifiers", [])]
    for extra, requirements in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f"Requires-Dist: {r} ; extra == '{extra}'" for r in requirements]
    lines.append("Description-Content-Type: text/markdown; charset=UTF-8; variant=GFM")
    readme = (PYTHON / project["readme"]).read_text(encoding="utf-8")
    return "\n".join(lines) + "\n\n" + readme


def record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode("ascii")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--native", required=True, type=Path, help="the built extension module")
    parser.add_argument("--tag", required=True, action="append", help="a wheel tag (several: compressed)")
    parser.add_argument("--out", required=True, type=Path, help="the folder to write the wheel into")
    args = parser.parse_args()

    project = tomllib.loads((PYTHON / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    maturin = tomllib.loads((PYTHON / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["maturin"]
    package, module = maturin["module-name"].split(".")
    ver = version()
    dist = re.sub(r"[-_.]+", "_", project["name"]).lower()
    info = f"{dist}-{ver}.dist-info"

    files: dict[str, bytes] = {}
    for path in sorted((PYTHON / package).rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".so":
            files[path.relative_to(PYTHON).as_posix()] = path.read_bytes()
    files[f"{package}/{module}.abi3.so"] = args.native.read_bytes()
    files[f"{info}/METADATA"] = metadata(project, ver).encode("utf-8")
    wheel = ["Wheel-Version: 1.0", "Generator: tribunal scripts/wheel.py", "Root-Is-Purelib: false"]
    files[f"{info}/WHEEL"] = ("\n".join(wheel + [f"Tag: {t}" for t in args.tag]) + "\n").encode("utf-8")
    record = [f"{name},{record_hash(data)},{len(data)}" for name, data in files.items()]
    files[f"{info}/RECORD"] = ("\n".join(record + [f"{info}/RECORD,,"]) + "\n").encode("utf-8")

    # One file name for several tags: each part's alternatives joined by dots.
    parts = [t.split("-") for t in args.tag]
    compressed = "-".join(".".join(dict.fromkeys(p[i] for p in parts)) for i in range(3))
    args.out.mkdir(parents=True, exist_ok=True)
    target = args.out / f"{dist}-{ver}-{compressed}.whl"
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            entry = zipfile.ZipInfo(name, EPOCH)
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
            archive.writestr(entry, data)
    print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
