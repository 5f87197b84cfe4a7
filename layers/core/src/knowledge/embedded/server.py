"""The embedded HTTP server: ``kb serve``. Same routes and JSON as API Gateway.

A ThreadingHTTPServer turns each request into a transport-neutral ``Request`` and hands it
to ``knowledge.api.routes.dispatch``; a worker thread runs refresh jobs and the scheduler.
"""

from __future__ import annotations

import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

from ..api.http import MAX_BODY_BYTES, Request, Response
from ..api.routes import dispatch
from ..ports import Services
from ..refresh.pipeline import drop_orphans
from ..refresh.reaper import reap_expired_leases
from .console import console_response, is_console_path
from .worker import InProcessWorkflow

log = logging.getLogger(__name__)


def make_handler(services: Services) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "kb/0.1"
        protocol_version = "HTTP/1.1"

        def _handle(self) -> None:
            parts = urlsplit(self.path)
            length_raw = self.headers.get("Content-Length") or "0"
            try:
                length = int(length_raw)
            except ValueError:
                length = -1
            if length < 0 or length > MAX_BODY_BYTES:
                self._send(Response(413, {"error": {"code": "file_too_large", "message": "request body too large"}}))
                self.close_connection = True
                return
            body = self.rfile.read(length) if length else b""
            if self.command in ("GET", "HEAD") and is_console_path(parts.path):
                self._send_file(*console_response(parts.path))
                return
            request = Request(
                method=self.command,
                path=parts.path,
                headers={k.lower(): v for k, v in self.headers.items()},
                query=dict(parse_qsl(parts.query)),
                body=body,
            )
            self._send(dispatch(services, request))

        def _send(self, response: Response) -> None:
            payload = response.encoded()
            self.send_response(response.status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in response.headers.items():
                self.send_header(name, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        def _send_file(self, status: int, headers: dict[str, str], payload: bytes) -> None:
            self.send_response(status)
            for name, value in {**headers, "Content-Length": str(len(payload))}.items():
                self.send_header(name, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_TRACE = _handle

        def __getattr__(self, name: str) -> object:
            # any other method (e.g. CONNECT, PROPFIND) reaches the router too, which answers
            # 405 or 404 in the API's error shape instead of the stdlib's 501 HTML page
            if name.startswith("do_"):
                return self._handle
            raise AttributeError(name)

        def log_message(self, format: str, *args: object) -> None:
            log.info("%s %s", self.address_string(), format % args)

    return Handler


class EmbeddedServer:
    def __init__(self, services: Services, host: str = "127.0.0.1", port: int = 8080):
        self.services = services
        if services.workflow is None:
            services.workflow = InProcessWorkflow(services)
        drop_orphans(services)  # generations that never went live are removed on start-up
        reap_expired_leases(services)
        self.httpd = ThreadingHTTPServer((host, port), make_handler(services))
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    def start(self) -> None:
        workflow = self.services.workflow
        if isinstance(workflow, InProcessWorkflow):
            workflow.start()
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="kb-http", daemon=True)
        self._thread.start()

    def serve_forever(self) -> None:
        workflow = self.services.workflow
        if isinstance(workflow, InProcessWorkflow):
            workflow.start()
        self.httpd.serve_forever()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        workflow = self.services.workflow
        if isinstance(workflow, InProcessWorkflow):
            workflow.stop()
