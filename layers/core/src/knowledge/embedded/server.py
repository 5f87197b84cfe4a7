"""The embedded HTTP server: ``kb serve``. Same routes and JSON as API Gateway.

uvicorn (asyncio, h11) speaks HTTP/1.1: keep-alive, chunked bodies, ``Expect: 100-continue``,
``TCP_NODELAY`` on every connection and a listen backlog sized for bursts. A small ASGI app
turns each request into the transport-neutral ``Request`` and runs
``knowledge.api.routes.dispatch`` on a pool of threads; a worker thread runs refresh jobs
and the scheduler.

What the app adds around the router, because only the transport can do it:

- a request with a large or chunked body has its token checked from the headers before any
  of the body is read, so an unauthenticated upload is refused without being received;
- the body size cap holds while the body arrives (413 ``file_too_large``), declared or chunked;
- a request must arrive whole within ``read_timeout`` seconds of its first byte (or of the
  connection opening): a client that sends 5 of 100 declared bytes gets 408 and is closed;
- a malformed request (``Content-Length: abc``, a broken chunk) gets 400 ``bad_request`` in
  the API's error shape, and the connection is closed since its framing is lost;
- SIGTERM and SIGINT stop accepting, let in-flight requests finish, then stop the worker and
  scheduler and write the queued retrieval records and gaps before the process exits 0.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import socket
import threading
from collections.abc import Awaitable, Callable, Generator, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qsl

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from ..api.auth import authenticate, authorize
from ..api.http import MAX_BODY_BYTES, Request, Response, error_response
from ..api.routes import dispatch, match
from ..errors import Code, KnowledgeError
from ..model import valid_bot_id
from ..ports import Services
from ..refresh.finish import drop_orphans
from ..refresh.reaper import reap_expired_leases
from .console import console_response, is_console_path
from .worker import InProcessWorkflow

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

#: a body declared larger than this (or chunked, size unknown) waits for the token check
PRECHECK_BYTES = 64 * 1024
READ_TIMEOUT = 30.0
KEEP_ALIVE_TIMEOUT = 15
GRACEFUL_SECONDS = 30
BACKLOG = 1024
THREADS = 8
JSON_TYPE = b"application/json; charset=utf-8"
CODE_BAD_REQUEST = "bad_request"
CODE_REQUEST_TIMEOUT = "request_timeout"


def _error_body(code: str, message: str) -> bytes:
    return Response(0, {"error": {"code": code, "message": message}}).encoded()


# -- the transport: uvicorn's h11 protocol with a read deadline and coded 400s ------------------


class KbProtocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol plus a per-request read deadline, and 400/408 answers in
    the API's JSON error shape."""

    read_timeout: float = READ_TIMEOUT

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._read_timer: asyncio.TimerHandle | None = None
        self._protocol_error: h11.RemoteProtocolError | None = None
        next_event = self.conn.next_event

        def remember_errors() -> Any:
            try:
                return next_event()
            except h11.RemoteProtocolError as exc:
                self._protocol_error = exc
                raise

        self.conn.next_event = remember_errors  # type: ignore[method-assign]

    # the deadline runs from a request's first byte (or the connection's opening) until the
    # request is complete; the response's completion disarms it for the next request
    def _arm(self) -> None:
        if self._read_timer is None:
            self._read_timer = self.loop.call_later(self.read_timeout, self._read_timed_out)

    def _disarm(self) -> None:
        if self._read_timer is not None:
            self._read_timer.cancel()
            self._read_timer = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        sock = transport.get_extra_info("socket")
        if sock is not None:  # headers and body are two writes: never hold the second for an ACK
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self.cycle is None or self.cycle.response_complete:
            self._arm()
        super().data_received(data)

    def on_response_complete(self) -> None:
        self._disarm()
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _read_timed_out(self) -> None:
        self._read_timer = None
        if self.transport.is_closing() or self.conn.their_state not in (h11.IDLE, h11.SEND_BODY):
            return  # the request is in: the route is running or answering
        if self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE) and self.conn.their_state == h11.SEND_BODY:
            self._send_error(408, CODE_REQUEST_TIMEOUT, "the request did not arrive in time")
        self.transport.close()

    def send_400_response(self, msg: str) -> None:
        exc = self._protocol_error
        status = exc.error_status_hint if exc is not None and 400 <= exc.error_status_hint < 500 else 400
        detail = str(exc) if exc is not None and str(exc) else "invalid HTTP request"
        self._send_error(status, CODE_BAD_REQUEST, f"malformed HTTP request: {detail}")
        self.transport.close()

    def _send_error(self, status: int, code: str, message: str) -> None:
        body = _error_body(code, message)
        headers = [(b"Content-Type", JSON_TYPE), (b"Content-Length", str(len(body)).encode()),
                   (b"Connection", b"close")]
        try:
            start = h11.Response(status_code=status, headers=headers, reason=HTTPStatus(status).phrase.encode())
            self.transport.write(self.conn.send(start) or b"")
            self.transport.write(self.conn.send(h11.Data(data=body)) or b"")
            self.transport.write(self.conn.send(h11.EndOfMessage()) or b"")
        except h11.LocalProtocolError:  # a response had already started: closing says enough
            pass


# -- the app: headers -> (token check) -> bounded body -> dispatch on a thread ---------------------


def precheck(services: Services, method: str, path: str, authorization: str | None) -> Response | None:
    """The 401/403 the router would answer, decided from the headers alone (None: go on).
    Used before reading a large body, so an unauthenticated upload is never received."""
    try:
        route, params = match(method.upper(), path.rstrip("/") or "/")
        if route is None or not isinstance(params, dict) or route.scope is None:
            return None  # 404/405 or a public route: the router answers without the body
        token = authenticate(services, authorization)
        bot = params.get("botID", "")
        if valid_bot_id(bot):
            authorize(token, bot, route.scope)
    except KnowledgeError as exc:
        return error_response(exc)
    return None


class KbApp:
    """ASGI app: one HTTP request -> ``Request`` -> ``dispatch`` -> one JSON response."""

    def __init__(self, services: Services, executor: ThreadPoolExecutor, max_body: int = MAX_BODY_BYTES):
        self.services = services
        self.executor = executor
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers: dict[str, str] = {}
        for raw_name, raw_value in scope["headers"]:
            name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        method = str(scope["method"])
        # the path as sent (percent-escapes kept), like API Gateway's resource matching
        path = (scope.get("raw_path") or scope["path"].encode()).decode("latin-1") or "/"
        loop = asyncio.get_running_loop()
        if method in ("GET", "HEAD") and is_console_path(path):  # the operator console's files
            status, file_headers, payload = await loop.run_in_executor(self.executor, console_response, path)
            await self._send_file(send, status, file_headers, payload)
            return

        chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        try:
            declared = None if chunked else int(headers.get("content-length") or 0)
        except ValueError:  # h11 has already refused such a request; kept for other transports
            await self._reply(send, method, Response(400, {"error": {
                "code": CODE_BAD_REQUEST, "message": "invalid Content-Length"}}), close=True)
            return
        if declared is None or declared > PRECHECK_BYTES:
            denied = await loop.run_in_executor(self.executor, precheck, self.services, method, path,
                                                headers.get("authorization"))
            if denied is not None:
                await self._reply(send, method, denied, close=True)  # the body stays unread
                return
        too_large = Response(413, {"error": {"code": Code.FILE_TOO_LARGE, "message": "request body too large"}})
        if declared is not None and declared > self.max_body:
            await self._reply(send, method, too_large, close=True)
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # the client left, or the read deadline closed the connection
            body += message.get("body", b"")
            if len(body) > self.max_body:
                await self._reply(send, method, too_large, close=True)
                return
            if not message.get("more_body", False):
                break
        # HEAD is GET without the body (uvicorn drops it, keeping the GET's Content-Length)
        request = Request(method="GET" if method == "HEAD" else method, path=path, headers=headers,
                          query=dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"))),
                          body=bytes(body))
        response = await loop.run_in_executor(self.executor, dispatch, self.services, request)
        await self._reply(send, method, response)

    async def _reply(self, send: Send, method: str, response: Response, *, close: bool = False) -> None:
        try:
            payload = response.encoded()
        except (TypeError, ValueError, UnicodeError) as exc:
            response = error_response(exc)
            payload = response.encoded()
        headers: list[tuple[bytes, bytes]] = []
        if response.status not in (204, 304):
            headers += [(b"Content-Type", JSON_TYPE), (b"Content-Length", str(len(payload)).encode())]
        for name, value in response.headers.items():  # names as the route wrote them (Retry-After, Allow)
            headers.append((name.encode("latin-1"), str(value).encode("latin-1")))
        if close:
            headers.append((b"Connection", b"close"))
        await send({"type": "http.response.start", "status": response.status, "headers": headers})
        # uvicorn sends no body for HEAD, with the Content-Length the GET would have
        await send({"type": "http.response.body", "body": b"" if response.status in (204, 304) else payload})

    async def _send_file(self, send: Send, status: int, headers: dict[str, str], payload: bytes) -> None:
        """A console file (or its 404 page), headers as ``console_response`` wrote them."""
        raw = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]
        raw.append((b"Content-Length", str(len(payload)).encode()))
        await send({"type": "http.response.start", "status": status, "headers": raw})
        await send({"type": "http.response.body", "body": payload})  # uvicorn drops it for HEAD


# -- the server ----------------------------------------------------------------------------------


class _Server(uvicorn.Server):
    """uvicorn's server; a signal asks for a graceful stop and the process then exits 0
    (uvicorn would re-raise the signal once stopped, ending the process before kb's own
    shutdown had run)."""

    @contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def bind(host: str, port: int, backlog: int = BACKLOG) -> socket.socket:
    """A listening TCP socket (OSError when the address is taken or not ours)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets that say they are TCP
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


class EmbeddedServer:
    def __init__(self, services: Services, host: str = "127.0.0.1", port: int = 8080, *,
                 read_timeout: float = READ_TIMEOUT, threads: int = THREADS, backlog: int = BACKLOG,
                 keep_alive: int = KEEP_ALIVE_TIMEOUT, graceful_seconds: int = GRACEFUL_SECONDS):
        self.services = services
        self.sock = bind(host, port, backlog)  # first: a busy port fails before any other work
        if services.workflow is None:
            services.workflow = InProcessWorkflow(services)
        drop_orphans(services)  # generations that never went live are removed on start-up
        reap_expired_leases(services)
        self.executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="kb-http")
        protocol = type("KbProtocolConfigured", (KbProtocol,), {"read_timeout": read_timeout})
        config = uvicorn.Config(
            KbApp(services, self.executor), http=protocol, lifespan="off", log_config=None, access_log=True,
            backlog=backlog, timeout_keep_alive=keep_alive, timeout_graceful_shutdown=graceful_seconds,
            proxy_headers=False, server_header=False, ws="none", interface="asgi3",
        )
        self.server = _Server(config)
        self._thread: threading.Thread | None = None
        self._closed = False
        self._lock = threading.Lock()

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    def _start_workflow(self) -> None:
        workflow = self.services.workflow
        if isinstance(workflow, InProcessWorkflow):
            workflow.start()

    def start(self) -> None:
        """Serve on a background thread (tests, tools); ``stop`` ends it."""
        self._start_workflow()
        self._thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]},
                                        name="kb-http-loop", daemon=True)
        self._thread.start()

    def serve_forever(self) -> None:
        """Serve on this thread until SIGTERM/SIGINT, then shut down gracefully."""
        self._start_workflow()
        try:
            self.server.run(sockets=[self.sock])
        finally:
            self.close()

    def stop(self) -> None:
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(GRACEFUL_SECONDS + 10)
            self._thread = None
        self.close()

    def close(self) -> None:
        """After the last request: stop the worker and scheduler, write queued retrieval records and gaps."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self.sock.close()
        self.executor.shutdown(wait=True)
        workflow = self.services.workflow
        if isinstance(workflow, InProcessWorkflow):
            workflow.stop()
        close = getattr(self.services.state, "close", None)
        if callable(close):
            close()
