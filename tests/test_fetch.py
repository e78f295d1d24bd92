"""The site builder's download of the numeric packages, against a loopback stand-in for the CDN.

A threading HTTP server on 127.0.0.1 serves small generated wheels; a generated lock file
names them (with ``depends``) the way Pyodide's ``pyodide-lock.json`` does. The download
and vendoring functions are called directly (no ``jupyter lite build``): the good path,
a sha256 mismatch, a missing file, a truncated download, a re-run that downloads nothing
and a CDN that cannot be reached at all.
"""

from __future__ import annotations

import functools
import hashlib
import json
import socket
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from browser_harness import serving
from sitebuild import fetch, serve, settings, vendor
from sitebuild.lock import numeric_keys

pytestmark = pytest.mark.needs_sockets  # every test stands up the loopback CDN

ROOT = Path(__file__).resolve().parents[1]
#: name → (version, depends); the kernel's roots, the numeric closure and one bystander
PACKAGES = {
    "micropip": ("0.11.1", []), "ipython": ("9.12.0", ["six"]), "jedi": ("0.19.2", []),
    "six": ("1.17.0", []), "numpy": ("2.4.6", []),
    "pandas": ("3.0.2", ["numpy", "python-dateutil"]), "python-dateutil": ("2.9.0", ["six"]),
    "matplotlib": ("3.10.8", ["numpy", "pyparsing"]), "pyparsing": ("3.3.2", []),
    "scipy": ("1.18.0", ["numpy"]), "sympy": ("1.14.0", []),
}
NUMERIC = ["matplotlib", "numpy", "pandas", "pyparsing", "python-dateutil", "scipy"]


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_wheel(folder: Path, name: str, version: str) -> Path:
    """A small real wheel: one module and its dist-info."""
    module = name.replace("-", "_")
    path = folder / f"{module}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as whl:
        whl.writestr(f"{module}/__init__.py", f"__version__ = {version!r}\n")
        whl.writestr(f"{module}-{version}.dist-info/METADATA",
                     f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    return path


class CdnHandler(serve.QuietSiteHandler):
    """Static files; records every request path and cuts the files in ``truncate`` short
    (the full Content-Length is announced, half the bytes are sent)."""

    def do_GET(self) -> None:
        self.server.requests.append(self.path)
        name = self.path.rsplit("/", 1)[-1]
        if name in self.server.truncate:
            data = Path(self.directory, name).read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.close_connection = True
            return
        super().do_GET()


class Cdn:
    """The loopback CDN: its folder, base URL, lock file and the requests it answered."""

    def __init__(self, folder: Path, url: str, server: serve.SiteServer) -> None:
        self.folder, self.url, self.server = folder, url + "/", server
        self.lock = {"info": {"python": "3.14.2"}, "packages": {}}
        for name, (version, depends) in PACKAGES.items():
            wheel = make_wheel(folder, name, version)
            self.lock["packages"][name] = {
                "name": name, "version": version, "file_name": wheel.name,
                "sha256": sha(wheel), "depends": depends, "imports": [name],
                "package_type": "package", "install_dir": "site"}

    @property
    def requests(self) -> list[str]:
        return self.server.requests

    def file_name(self, key: str) -> str:
        return self.lock["packages"][key]["file_name"]


@pytest.fixture
def cdn(tmp_path: Path) -> Iterator[Cdn]:
    folder = tmp_path / "cdn"
    folder.mkdir()
    server = serve.SiteServer(("127.0.0.1", 0),
                              functools.partial(CdnHandler, directory=str(folder)))
    server.requests, server.truncate = [], set()
    with serving(server) as url:
        yield Cdn(folder, url, server)


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    """The numeric packages' folder of a build cache in a temp dir (``cache.parent``)."""
    return tmp_path / "site-cache" / "pyodide-packages"


@pytest.fixture
def vendored(tmp_path: Path) -> Path:
    """Where the vendoring goes: a temp dir's ``lite/static/pyodide``."""
    return tmp_path / "lite" / "static" / "pyodide"


@pytest.fixture
def pyodide_package(cdn: Cdn, tmp_path: Path) -> tuple[Path, list[Path]]:
    """A fake npm package ``pyodide`` (core files + the loopback lock) and the kernel's
    wheels in a temp dir; returns (package, kernel wheels)."""
    package = tmp_path / "pyodide-package"
    package.mkdir()
    for name in settings.CORE_FILES:
        (package / name).write_text(name)
    (package / "pyodide-lock.json").write_text(json.dumps(cdn.lock))
    kernel_dir = tmp_path / "kernel-wheels"
    kernel_dir.mkdir()
    kernel = [make_wheel(kernel_dir, name, PACKAGES[name][0])
              for name in ("micropip", "ipython", "jedi", "six")]
    return package, kernel


def closed_port_url() -> str:
    """A loopback URL where nothing listens (connection refused: 'no network')."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/"


def test_numeric_keys_follow_depends_without_the_kernels_own(cdn: Cdn) -> None:
    assert numeric_keys(cdn.lock) == NUMERIC        # six comes with the kernel


def test_download_checks_sha256_and_renames_atomically(cdn: Cdn, tmp_path: Path) -> None:
    name = cdn.file_name("numpy")
    dest = tmp_path / name
    size = fetch.download(cdn.url + name, dest, cdn.lock["packages"]["numpy"]["sha256"])
    assert size == dest.stat().st_size and sha(dest) == sha(cdn.folder / name)
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")] == []


def test_fetch_vendor_and_rerun(cdn: Cdn, cache: Path, vendored: Path,
                                pyodide_package: tuple[Path, list[Path]],
                                capsys: pytest.CaptureFixture[str]) -> None:
    """The good path: downloaded once into the cache, vendored next to the patched lock,
    served locally with the lock's sha256; a second build downloads nothing."""
    package, kernel = pyodide_package
    mode = vendor.vendor_pyodide(package, kernel, None, offline=False, cdn=cdn.url,
                                 cache=cache.parent, dest=vendored)
    downloaded = sorted(p.rsplit("/", 1)[-1] for p in cdn.requests)
    assert downloaded == sorted(cdn.file_name(k) for k in NUMERIC)
    assert mode == {"pyodide": settings.PYODIDE_VERSION, "numeric": "vendored", "cdn": cdn.url,
                    "remote": []}
    out = capsys.readouterr()
    assert "the site is fully offline" in out.out and "WARNING" not in out.err
    assert "(6/6)" in out.out                              # one progress line per file

    lock = json.loads((vendored / "pyodide-lock.json").read_text())
    with serving(serve.make_server(vendored, 0)) as site:
        for key in NUMERIC + ["micropip", "ipython", "jedi", "six"]:
            e = lock["packages"][key]
            assert "/" not in e["file_name"], f"{key} still points at {e['file_name']}"
            with urllib.request.urlopen(f"{site}/{e['file_name']}") as response:
                body = response.read()
            assert hashlib.sha256(body).hexdigest() == e["sha256"], key
    for key in NUMERIC:
        assert lock["packages"][key]["sha256"] == cdn.lock["packages"][key]["sha256"]
    assert lock["packages"]["sympy"]["file_name"] == cdn.url + cdn.file_name("sympy")
    assert sorted(p.name for p in cache.iterdir()) == sorted(cdn.file_name(k) for k in NUMERIC)

    before = len(cdn.requests)
    again = vendor.vendor_pyodide(package, kernel, None, offline=False, cdn=cdn.url,
                                  cache=cache.parent, dest=vendored)
    assert again == mode
    assert len(cdn.requests) == before, "a re-run with a full cache downloaded again"


@pytest.mark.parametrize("fault", ["sha256", "missing", "truncated"])
def test_a_bad_download_names_the_file_and_leaves_no_cache_entry(cdn: Cdn, cache: Path,
                                                                 fault: str) -> None:
    name = cdn.file_name("scipy")
    if fault == "sha256":
        (cdn.folder / name).write_bytes(b"another build of scipy")
        expected = rf"{name}: sha256 of the download .* pyodide-lock.json says"
    elif fault == "missing":
        (cdn.folder / name).unlink()
        expected = rf"{name}: {cdn.url}{name} answered HTTP 404"
    else:
        cdn.server.truncate.add(name)
        expected = rf"{name}: truncated download from {cdn.url}{name}: \d+ of \d+ bytes"
    with pytest.raises(ValueError, match=expected):
        fetch.lock_files(cdn.lock, ["scipy"], cache, cdn.url)
    assert list(cache.iterdir()) == [], "a bad download left a file in the cache"
    with pytest.raises(SystemExit, match=name):           # in the build: an error too
        fetch.numeric_files(cdn.lock, ["scipy"], offline=False, cdn=cdn.url,
                            cache=cache.parent)


def test_cached_files_are_reused_and_a_corrupt_one_is_not(cdn: Cdn, cache: Path) -> None:
    files = fetch.lock_files(cdn.lock, ["numpy", "scipy"], cache, cdn.url)
    assert len(cdn.requests) == 2
    files["scipy"].write_bytes(b"bit rot")
    assert fetch.lock_files(cdn.lock, ["numpy", "scipy"], cache) == {"numpy": files["numpy"]}
    fetch.lock_files(cdn.lock, ["numpy", "scipy"], cache, cdn.url)
    assert [p.rsplit("/", 1)[-1] for p in cdn.requests[2:]] == [cdn.file_name("scipy")]
    assert sha(files["scipy"]) == cdn.lock["packages"]["scipy"]["sha256"]


def test_unreachable_cdn_or_offline_leaves_them_remote(cdn: Cdn, cache: Path) -> None:
    files, why = fetch.numeric_files(cdn.lock, NUMERIC, offline=False, cdn=closed_port_url(),
                                     cache=cache.parent)
    assert files == {} and "cannot be reached" in why
    fetch.lock_files(cdn.lock, ["numpy"], cache, cdn.url)
    files, why = fetch.numeric_files(cdn.lock, NUMERIC, offline=True, cdn=cdn.url,
                                     cache=cache.parent)
    assert list(files) == ["numpy"] and "--offline" in why
    assert len(cdn.requests) == 1                          # --offline never downloads


def test_unreachable_cdn_gives_one_warning_and_a_cdn_site(
        cdn: Cdn, cache: Path, vendored: Path, pyodide_package: tuple[Path, list[Path]],
        capsys: pytest.CaptureFixture[str]) -> None:
    package, kernel = pyodide_package
    offline_cdn = closed_port_url()
    mode = vendor.vendor_pyodide(package, kernel, None, offline=False, cdn=offline_cdn,
                                cache=cache.parent, dest=vendored)
    assert mode["numeric"] == "cdn" and mode["cdn"] == offline_cdn
    assert mode["remote"] == NUMERIC                       # six is the kernel's, local
    err = capsys.readouterr().err
    assert err.count("WARNING") == 1
    assert f"from the Pyodide CDN {offline_cdn} at run time" in err
    assert "python-dateutil" in err and "python build.py fetch" in err
    lock = json.loads((vendored / "pyodide-lock.json").read_text())
    assert lock["packages"]["numpy"]["file_name"] == offline_cdn + cdn.file_name("numpy")


def test_a_full_distribution_needs_no_download(cdn: Cdn, cache: Path, vendored: Path,
                                               pyodide_package: tuple[Path, list[Path]]) -> None:
    """--pyodide-dist DIR: the numeric packages come from there, none from the CDN."""
    package, kernel = pyodide_package
    (cdn.folder / "pyodide-lock.json").write_text(json.dumps(cdn.lock))
    mode = vendor.vendor_pyodide(package, kernel, cdn.folder, offline=False, cdn=cdn.url,
                                cache=cache.parent, dest=vendored)
    assert mode["numeric"] == "vendored" and cdn.requests == []
    lock = json.loads((vendored / "pyodide-lock.json").read_text())
    assert lock["packages"]["sympy"]["file_name"] == cdn.file_name("sympy")  # all of it
