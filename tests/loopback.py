"""A WSGI app served on a loopback address from a thread of the test process: what the tests
put in front of the sandbox, or in its place, to answer as it would not (a proxy that reshapes
answers, a list of scripted pages, a host that misbehaves)."""

from __future__ import annotations

import threading

from werkzeug.serving import make_server


class LoopbackServer:
    """Serves `app` on `host`, a loopback address, at a free port until `stop()`; `url` is
    its root."""

    def __init__(self, app, host: str = "127.0.0.1"):
        self.server = make_server(host, 0, app, threaded=True)
        self.url = f"http://{host}:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
