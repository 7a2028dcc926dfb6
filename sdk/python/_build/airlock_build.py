"""PEP 517 backend for the airlock SDK.

setuptools needs the separate ``wheel`` package (before setuptools 70.1) to
build wheels, and pip's build isolation needs an index to fetch either: on an
offline host neither may be there. So this backend delegates to
setuptools.build_meta when setuptools can build a wheel, and otherwise
builds the wheel itself: the package is pure Python with no dependencies,
so the wheel is a zip of airlock/ plus metadata, per the wheel spec.
"""

import base64
import hashlib
import io
import os
import tarfile
import zipfile

NAME = "airlock"  # the import package
DIST = "airlock_sandbox"  # the distribution ("airlock-sandbox"; "airlock" is taken on PyPI)
VERSION = "0.1.0"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TAG = "py3-none-any"


def _setuptools():
    try:
        from setuptools import build_meta  # noqa: F401
        try:
            from setuptools.command import bdist_wheel  # noqa: F401  (setuptools >= 70.1)
        except ImportError:
            import wheel.bdist_wheel  # noqa: F401
        return build_meta
    except ImportError:
        return None


def _metadata() -> str:
    readme = ""
    path = os.path.join(ROOT, "README.md")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            readme = f.read()
    return (
        "Metadata-Version: 2.1\n"
        "Name: airlock-sandbox\nVersion: %s\n"
        "Summary: Python SDK for airlock: run untrusted document jobs in throwaway microVMs\n"
        "License: Apache-2.0\nRequires-Python: >=3.9\n"
        "Description-Content-Type: text/markdown\n\n%s" % (VERSION, readme)
    )


def _files():
    pkg = os.path.join(ROOT, NAME)
    for dirpath, dirnames, filenames in os.walk(pkg):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for fn in sorted(filenames):
            if fn.endswith((".py", ".typed")):
                full = os.path.join(dirpath, fn)
                yield full, os.path.relpath(full, ROOT).replace(os.sep, "/")


def _record_line(arcname: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (arcname, digest, len(data))


def _dist_info(wheel: str) -> dict:
    di = "%s-%s.dist-info" % (DIST, VERSION)
    return {
        di + "/METADATA": _metadata().encode(),
        di + "/WHEEL": ("Wheel-Version: 1.0\nGenerator: airlock_build\nRoot-Is-Purelib: true\nTag: %s\n" % TAG).encode(),
        di + "/top_level.txt": (NAME + "\n").encode(),
    }


def _build_wheel(wheel_directory, editable=False):
    wheel = "%s-%s-%s.whl" % (DIST, VERSION, TAG)
    di = "%s-%s.dist-info" % (DIST, VERSION)
    entries = []
    if editable:
        entries.append(("%s.pth" % DIST, (ROOT + "\n").encode()))
    else:
        for full, arc in _files():
            with open(full, "rb") as f:
                entries.append((arc, f.read()))
    entries.extend(_dist_info(wheel).items())
    record = [_record_line(a, d) for a, d in entries] + [di + "/RECORD,,"]
    entries.append((di + "/RECORD", ("\n".join(record) + "\n").encode()))
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data in entries:
            z.writestr(zipfile.ZipInfo(arc, date_time=(1980, 1, 1, 0, 0, 0)), data)
    return wheel


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    st = _setuptools()
    if st is not None:
        return st.build_wheel(wheel_directory, config_settings, metadata_directory)
    return _build_wheel(wheel_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _build_wheel(wheel_directory, editable=True)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    st = _setuptools()
    if st is not None:
        return st.prepare_metadata_for_build_wheel(metadata_directory, config_settings)
    di = "%s-%s.dist-info" % (DIST, VERSION)
    os.makedirs(os.path.join(metadata_directory, di), exist_ok=True)
    for arc, data in _dist_info("").items():
        with open(os.path.join(metadata_directory, arc), "wb") as f:
            f.write(data)
    return di


def build_sdist(sdist_directory, config_settings=None):
    base = "%s-%s" % (DIST, VERSION)
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as t:
        extra = ["pyproject.toml", "README.md", "_build/airlock_build.py"]
        for rel in extra:
            full = os.path.join(ROOT, rel)
            if os.path.exists(full):
                t.add(full, arcname=base + "/" + rel)
        for full, arc in _files():
            t.add(full, arcname=base + "/" + arc)
        info = tarfile.TarInfo(base + "/PKG-INFO")
        data = _metadata().encode()
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    return name
