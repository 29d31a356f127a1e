"""Runs the sandbox on loopback with cheroot, a production WSGI server with a thread pool.

`start(SandboxOptions(db_path=...))` serves in a daemon thread and returns once the socket
listens; `RunningSandbox.url` is the host root (the API lives under `/buyers/v2` and
`/buyers/v3`). `port=0` picks a free port. `sandbox serve` uses the same server in the
foreground (`build`, `SandboxServer.listen`, `SandboxServer.serve`).

Why cheroot: connections are kept alive (HTTP/1.1), an idle one waits in a selector instead of
holding a thread, the pool of request threads is fixed (no thread started per connection), and
it stops on request from another thread, which the embedded sandbox needs.

cheroot hands a newly accepted connection straight to a request thread, which then waits for
its first byte: `--threads` idle connections (opened and never written to) held every thread,
and every other request waited for the idle timeout. Here a new connection waits in the
selector like a kept-alive one (`_IdleConnections`) and reaches a thread only once it has sent
something; a request that starts and then stalls holds its thread for REQUEST_TIMEOUT_S at
most.
"""

from __future__ import annotations

import logging
import queue
import sqlite3
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote_to_bytes

from cheroot.connections import ConnectionManager
from cheroot.wsgi import Server as WsgiServer

from surveyctl.sandbox.accounts import Accounts
from surveyctl.sandbox.app import create_app
from surveyctl.sandbox.errors import SandboxError, refused_by_the_disk
from surveyctl.sandbox.faults import Faults
from surveyctl.sandbox.ratelimit import RateLimit
from surveyctl.sandbox.store import Store
from surveyctl.sandbox.store.database import NewerData

# Requests served at once. A request delayed by --latency-ms holds its thread while it
# sleeps, so this is also how many delayed requests overlap: above a client's default of 10
# in flight (`--parallelism`), below its most, 64, which wants `--threads` as high.
DEFAULT_THREADS = 32
LISTEN_BACKLOG = 128  # cheroot's default of 5 refuses bursts of parallel connects
IDLE_TIMEOUT_S = 60.0  # a connection idle this long (waiting in the selector) is closed
# How long a request thread waits on a socket that has started a request (the rest of its
# headers or body) or is slow to take the answer; a client on loopback never needs long.
REQUEST_TIMEOUT_S = 10.0
STOP_POLL_S = 0.1  # how often the selector loop looks for a stop request
STOP_GRACE_S = 1.0  # how long a stop waits for requests in flight (a delayed one, say)


log = logging.getLogger("surveyctl.sandbox.server")


class SandboxStartError(SandboxError):
    """The sandbox cannot listen or open its data file."""


@dataclass
class SandboxOptions:
    """How to run a sandbox: its data file, address, threads and injected faults."""

    db_path: Path
    host: str = "127.0.0.1"
    port: int = 0
    latency_ms: int = 0
    fail_rate: float = 0.0
    seed: int | None = None
    keys: dict[str, int] = field(default_factory=dict)  # extra access tokens -> buyer id
    retry_after: int = 1
    check_responses: bool = False
    threads: int = DEFAULT_THREADS
    strict: bool = False  # refuse request fields the schemas do not list
    rate_limit: float = 0.0  # requests per second per access-token; 0: no limit


class SandboxServer:
    """The sandbox app under cheroot: `listen()` binds, `serve()` blocks until `stop()`."""

    def __init__(self, options: SandboxOptions, store: Store, accounts: Accounts):
        self.options = options
        self.store = store
        self.accounts = accounts
        faults = Faults(options.latency_ms, options.fail_rate, options.seed, options.retry_after)
        app = create_app(
            store,
            accounts=accounts,
            faults=faults,
            check_responses=options.check_responses,
            strict=options.strict,
            rate_limit=RateLimit(options.rate_limit) if options.rate_limit else None,
        )
        self._wsgi = _WsgiServer(
            (options.host, options.port),
            _slashes_decoded(app),
            numthreads=options.threads,
            request_queue_size=LISTEN_BACKLOG,
            timeout=REQUEST_TIMEOUT_S,
            server_name="surveyctl-sandbox",
        )
        self._wsgi.keep_alive_conn_limit = None  # every client connection may stay open
        self._wsgi.expiration_interval = STOP_POLL_S
        self._wsgi.shutdown_timeout = STOP_GRACE_S
        # cheroot writes every message to stderr, whatever its level; a command's stderr is for
        # surveyctl's own messages, so they go to a logger (warnings and errors still show).
        self._wsgi.error_log = _log

    @property
    def port(self) -> int:
        return self._wsgi.bind_addr[1]

    def listen(self) -> None:
        """Binds the socket and starts the request threads (daemons if called from one)."""
        try:
            self._wsgi.prepare()
        except OSError as exc:
            self.store.close()
            where = f"{self.options.host}:{self.options.port}"
            raise SandboxStartError(f"cannot listen on {where}: {_reason(exc)}") from exc

    def serve(self) -> None:
        """Serves until `stop()` is called from another thread (or Ctrl-C in this one)."""
        self._wsgi.serve()

    def stop(self) -> None:
        """Stops accepting, closes the connections, waits briefly for requests in flight."""
        self._wsgi.stop()


class _IdleConnections(ConnectionManager):
    """cheroot's connection manager, with new connections kept in the selector until they
    send something (cheroot gives them a thread at once), and idle ones closed after
    IDLE_TIMEOUT_S rather than after the socket timeout of a request in progress."""

    def _from_server_socket(self, server_socket):
        conn = super()._from_server_socket(server_socket)
        if conn is not None:
            self.put(conn)  # registered for reading: a thread takes it when it has data
        return None  # nothing for the caller to hand to a thread now

    def _expire(self, threshold: float) -> None:
        super()._expire(threshold + self.server.timeout - IDLE_TIMEOUT_S)


class _WsgiServer(WsgiServer):
    """cheroot's WSGI server with `_IdleConnections` as its connection manager."""

    def prepare(self) -> None:
        super().prepare()
        # prepare() makes its own manager; replaced before serve() starts selecting on it.
        default = self._connections
        self._connections = _IdleConnections(self)
        default._selector.close()


def _log(msg: str = "", level: int = logging.INFO, traceback: bool = False) -> None:
    log.log(level, "%s", msg, exc_info=traceback)


def _slashes_decoded(app: Callable) -> Callable:
    """The app with `%2F` in the path decoded like every other escape, as WSGI asks.

    cheroot keeps an escaped slash escaped in PATH_INFO; a quota id such as `m/18-24` travels
    as `m%2F18-24` and must reach the route whole. PATH_INFO is rebuilt from the raw request
    path, so a literal `%2F` (sent as `%252F`) stays what it was.
    """

    def wsgi(environ: dict, start_response: Callable) -> Iterable[bytes]:
        if "%2" in environ["PATH_INFO"]:
            raw = environ["REQUEST_URI"].split("?", 1)[0]
            environ["PATH_INFO"] = unquote_to_bytes(raw).decode("latin-1")
        return app(environ, start_response)

    return wsgi


def build(options: SandboxOptions) -> SandboxServer:
    """The server (not yet listening) over the store and accounts of `options`."""
    folder = options.db_path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise SandboxStartError(
            f"{options.db_path}: cannot make the folder of the sandbox data: "
            f"{exc.filename or folder}: {reason}"
        ) from exc
    try:
        store = Store(options.db_path)
    except sqlite3.Error as exc:
        hint = "; free some space" if refused_by_the_disk(exc) else ""
        raise SandboxStartError(
            f"{options.db_path}: cannot open the sandbox data: {exc}{hint}"
        ) from exc
    except NewerData as exc:
        raise SandboxStartError(f"{options.db_path}: {exc}") from None
    return SandboxServer(options, store, Accounts(options.keys))


@dataclass
class RunningSandbox:
    """A sandbox serving in a background thread."""

    url: str
    server: SandboxServer
    thread: threading.Thread
    store: Store
    accounts: Accounts

    def stop(self) -> None:
        self.server.stop()
        self.thread.join(timeout=5)
        self.store.close()


def start(options: SandboxOptions) -> RunningSandbox:
    """Starts a sandbox in a daemon thread; returns once it accepts connections."""
    server = build(options)
    listening: queue.SimpleQueue[BaseException | None] = queue.SimpleQueue()

    def run() -> None:
        # Bound here, not in the caller, so that cheroot's request threads are started from a
        # daemon thread and are daemons too: a command that never stops its embedded sandbox
        # still exits.
        try:
            server.listen()
        except BaseException as exc:  # handed to the caller's thread
            listening.put(exc)
            return
        listening.put(None)
        server.serve()

    thread = threading.Thread(target=run, name="surveyctl-sandbox", daemon=True)
    thread.start()
    failure = listening.get()
    if failure is not None:
        thread.join()
        raise failure
    url = f"http://{url_host(options.host)}:{server.port}"
    return RunningSandbox(
        url=url, server=server, thread=thread, store=server.store, accounts=server.accounts
    )


def _reason(error: OSError) -> str:
    """`Address already in use` out of cheroot's "No socket could be created -- (...: [Errno
    98] Address already in use)"."""
    text = error.strerror or str(error)
    return text.rsplit("] ", 1)[-1].rstrip(")") if "] " in text else text


def url_host(host: str) -> str:
    """`host` as a URL writes it: an IPv6 address in brackets (http://[::1]:8080)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host
