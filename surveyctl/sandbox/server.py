"""Runs the sandbox on loopback with werkzeug's threaded WSGI server.

`start(SandboxOptions(db_path=...))` serves in a daemon thread and returns once the socket
listens; `RunningSandbox.url` is the host root (the API lives under `/buyers/v2` and
`/buyers/v3`). `port=0` picks a free port.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path

from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

from surveyctl.sandbox.accounts import Accounts
from surveyctl.sandbox.app import create_app
from surveyctl.sandbox.errors import SandboxError
from surveyctl.sandbox.faults import Faults
from surveyctl.sandbox.store import Store


class SandboxStartError(SandboxError):
    """The sandbox cannot listen or open its data file."""


@dataclass
class SandboxOptions:
    """How to run a sandbox: its data file, address and injected faults."""

    db_path: Path
    host: str = "127.0.0.1"
    port: int = 0
    latency_ms: int = 0
    fail_rate: float = 0.0
    seed: int | None = None
    keys: dict[str, int] = field(default_factory=dict)  # extra access tokens -> buyer id
    retry_after: int = 1
    check_responses: bool = False


@dataclass
class RunningSandbox:
    """A sandbox serving in a background thread."""

    url: str
    server: BaseWSGIServer
    thread: threading.Thread
    store: Store
    accounts: Accounts

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
        self.store.close()


class KeepAliveHandler(WSGIRequestHandler):
    """HTTP/1.1, so a client's pooled connection serves many requests: werkzeug's default
    HTTP/1.0 costs a new connection and a new thread per request."""

    protocol_version = "HTTP/1.1"


def build(options: SandboxOptions) -> tuple[BaseWSGIServer, Store, Accounts]:
    """The server (bound, not yet serving), its store and accounts."""
    try:
        store = Store(options.db_path)
    except sqlite3.Error as exc:
        raise SandboxStartError(f"{options.db_path}: cannot open the sandbox data: {exc}") from exc
    accounts = Accounts(options.keys)
    faults = Faults(options.latency_ms, options.fail_rate, options.seed, options.retry_after)
    app = create_app(
        store, accounts=accounts, faults=faults, check_responses=options.check_responses
    )
    # werkzeug logs one line per request; the CLI's stderr is for surveyctl's own messages.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    try:
        server = make_server(
            options.host, options.port, app, threaded=True, request_handler=KeepAliveHandler
        )
    except OSError as exc:
        store.close()
        raise SandboxStartError(
            f"cannot listen on {options.host}:{options.port}: {exc.strerror or exc}"
        ) from exc
    return server, store, accounts


def start(options: SandboxOptions) -> RunningSandbox:
    """Starts a sandbox in a daemon thread; returns once it accepts connections."""
    server, store, accounts = build(options)
    thread = threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": 0.1},
        name="surveyctl-sandbox",
        daemon=True,
    )
    thread.start()
    url = f"http://{_url_host(options.host)}:{server.server_port}"
    return RunningSandbox(url=url, server=server, thread=thread, store=store, accounts=accounts)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
