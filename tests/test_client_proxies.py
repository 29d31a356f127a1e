"""The client honours the proxy settings of the environment (HTTP_PROXY, NO_PROXY)."""

from __future__ import annotations

import http.client
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pytest

from surveyctl.api import ApiClient
from surveyctl.environments import SANDBOX_KEY as BUYER_1_KEY
from surveyctl.errors import ConnectionFailed

PROXY_VARIABLES = (
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
)


class _ForwardingProxy(BaseHTTPRequestHandler):
    """A plain HTTP proxy: forwards each request to the absolute URL it names and notes it."""

    seen: list[str] = []

    def do_GET(self) -> None:
        self.seen.append(self.path)
        target = urlsplit(self.path)
        upstream = http.client.HTTPConnection(target.hostname, target.port, timeout=10)
        headers = {k: v for k, v in self.headers.items() if k.lower() != "proxy-connection"}
        upstream.request(
            "GET", target.path + (f"?{target.query}" if target.query else ""), headers=headers
        )
        response = upstream.getresponse()
        body = response.read()
        self.send_response(response.status)
        self.send_header("Content-Type", response.getheader("Content-Type", "text/plain"))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        upstream.close()

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def proxy():
    _ForwardingProxy.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ForwardingProxy)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", _ForwardingProxy.seen
    server.shutdown()
    server.server_close()


@pytest.fixture
def clean_proxy_environment(monkeypatch):
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_requests_go_through_the_proxy_named_in_http_proxy(sandbox, proxy, clean_proxy_environment):
    address, seen = proxy
    clean_proxy_environment.setenv("HTTP_PROXY", address)
    client = ApiClient(sandbox.url, BUYER_1_KEY, retries=0)
    try:
        assert client.get_attributes_page("en_US") == client.get_attributes_page("en_US")
    finally:
        client.close()
    assert seen == [f"{sandbox.url}/buyers/v3/attributes?localization=en_US&page=1"] * 2


def test_no_proxy_exempts_the_marketplace_host(sandbox, clean_proxy_environment):
    clean_proxy_environment.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens
    clean_proxy_environment.setenv("NO_PROXY", "127.0.0.1")
    client = ApiClient(sandbox.url, BUYER_1_KEY, retries=0)
    try:
        assert client.get_attributes_page("en_US")[0]
    finally:
        client.close()


def test_an_unreachable_proxy_is_a_connection_failure(sandbox, clean_proxy_environment):
    clean_proxy_environment.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens
    client = ApiClient(sandbox.url, BUYER_1_KEY, retries=0)
    try:
        with pytest.raises(ConnectionFailed, match="connection refused .through the proxy"):
            client.get_attributes_page("en_US")
    finally:
        client.close()


@pytest.mark.parametrize("value", ["..", "http://../", "proxy..example.com"])
def test_a_proxy_whose_host_name_is_not_valid_is_one_sentence_naming_the_variables(
    sandbox, clean_proxy_environment, value
):
    clean_proxy_environment.setenv("HTTP_PROXY", value)
    client = ApiClient(sandbox.url, BUYER_1_KEY, retries=0)
    try:
        with pytest.raises(ConnectionFailed) as failed:
            client.get_attributes_page("en_US")
    finally:
        client.close()
    assert str(failed.value) == (
        f"cannot reach {sandbox.url}: GET /attributes was sent to a host name that is not "
        "valid, that of the proxy of $HTTP_PROXY/$HTTPS_PROXY or of a redirect of the service"
    )
