"""The static server of ``build.py serve``: the MIME types ES modules and WebAssembly need,
quiet unless asked, bound before the build so that a busy port fails at once."""

from __future__ import annotations

import functools
import http.server
import sys
from pathlib import Path


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with the MIME types ES modules and WebAssembly need."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".js": "text/javascript", ".mjs": "text/javascript",
                      ".wasm": "application/wasm", ".json": "application/json",
                      ".wgsl": "text/plain", ".whl": "application/octet-stream"}


class QuietSiteHandler(SiteHandler):
    """SiteHandler that logs no request (a short visit makes about 2,000); errors of the
    server itself still reach stderr through ``SiteServer.handle_error``."""

    def log_message(self, format: str, *args: object) -> None:
        pass


class SiteServer(http.server.ThreadingHTTPServer):
    """Threading server that ignores clients closing connections early (browsers do)."""

    def handle_error(self, request: object, client_address: object) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def make_server(directory: Path, port: int, *,
                verbose: bool = False) -> http.server.ThreadingHTTPServer:
    """A threading HTTP server for ``directory`` on 127.0.0.1:``port`` (0: a free port),
    quiet unless ``verbose`` (one log line per request, as ``serve --verbose`` asks)."""
    handler = functools.partial(SiteHandler if verbose else QuietSiteHandler,
                                directory=str(directory))
    return SiteServer(("127.0.0.1", port), handler)


def open_port(site: Path, port: int, verbose: bool = False) -> http.server.ThreadingHTTPServer:
    """Bind 127.0.0.1:``port`` for ``site`` now, so a busy port fails before a long build."""
    try:
        return make_server(site, port, verbose=verbose)
    except OSError as error:
        raise SystemExit(f"build: cannot serve on 127.0.0.1:{port} ({error.strerror}); "
                         "pass --port N for another port (0 picks a free one)") from None


def serve(server: http.server.ThreadingHTTPServer, site: Path) -> None:
    """Serve ``site`` until Ctrl-C, after a line naming its main pages."""
    with server:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        print(f"[build] serving {site} on {base}/ (Ctrl-C stops)\n"
              f"[build]   JupyterLab: {base}/lab/index.html  REPL: {base}/repl/index.html\n"
              f"[build]   demo report: {base}/report/report.html  "
              f"WebGPU timing: {base}/webgpu/index.html", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            print("\n[build] stopped")
