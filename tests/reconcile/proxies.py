"""Loopback proxies in front of the sandbox for answers the sandbox itself does not give.

`QuirkyProxy` answers survey reads in the shapes the service's documentation shows:

- fields the spec does not list: `mod_on` and `crtd_on` (epoch milliseconds);
- `quota_title: ""` on every quota;
- `offer_price` as an integer when it has no decimals (10, not 10.0);
- range bounds of qualifications and criteria as strings (`"from": "21"`).

Every other request, and every write, passes through unchanged, over real HTTP both ways.

`RefusingProxy` refuses (403) the reads and updates of the surveys a test names, or the survey
list, as a request refused on every retry is.

`HoldingProxy` holds the requests a test picks (`holds`) a while before forwarding them, and
keeps how many of them were in flight at once: what the tests of parallel reads count.
"""

from __future__ import annotations

import json
import re
import threading
import time

import requests
from werkzeug.wrappers import Request, Response

from ..loopback import LoopbackServer

_SURVEY = re.compile(r"^/buyers/v2/surveys/\d+$")
_PERFORMANCE = re.compile(r"^/buyers/v2/surveys/\d+/quotas/performance$")
_HOP_HEADERS = {"connection", "content-length", "transfer-encoding", "keep-alive"}


def quirky(body: dict) -> dict:
    """A survey response body in the documented shapes listed above."""
    body = dict(body, mod_on=1741166851000, crtd_on=1741080451000)
    price = body.get("offer_price")
    if isinstance(price, float) and price.is_integer():
        body["offer_price"] = int(price)
    body["qualifications"] = [_string_ranges(q) for q in body.get("qualifications") or []]
    body["quotas"] = [
        {
            **quota,
            "quota_title": "",
            "criteria": [_string_ranges(c) for c in quota.get("criteria") or []],
        }
        for quota in body.get("quotas") or []
    ]
    return body


def _string_ranges(item: dict) -> dict:
    if not item.get("range_sets"):
        return item
    ranges = [{**r, "from": _text(r["from"]), "to": _text(r["to"])} for r in item["range_sets"]]
    return {**item, "range_sets": ranges}


def _text(number) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


class Proxy(LoopbackServer):
    """Serves on 127.0.0.1 (`url`) until `stop()`, forwarding to `upstream`; `reshape` may
    change an answer."""

    def __init__(self, upstream: str):
        self.upstream = upstream.rstrip("/")
        self.session = requests.Session()
        super().__init__(self._app)

    def _app(self, environ, start_response):
        request = Request(environ)
        answer = self.forward(request)
        headers = {k: v for k, v in answer.headers.items() if k.lower() not in _HOP_HEADERS}
        content = self.reshape(request, answer, headers)
        return Response(content, answer.status_code, list(headers.items()))(environ, start_response)

    def forward(self, request: Request) -> requests.Response:
        """`request` as sent to the upstream, and its answer."""
        return self.session.request(
            request.method,
            self.upstream + request.full_path.rstrip("?"),
            data=request.get_data(),
            headers={k: v for k, v in request.headers if k.lower() != "host"},
            timeout=30,
        )

    def reshape(self, request: Request, answer: requests.Response, headers: dict) -> bytes:
        return answer.content

    def stop(self) -> None:
        super().stop()
        self.session.close()


class RefusingProxy(Proxy):
    """Refuses (403, code 1002) the reads of the surveys in `unreadable` (of those in
    `refusals_left`, only that many times each), the updates of those in `unwritable`, the
    reads of the survey list while `list_refused`, and every quota performance read while
    `performance_refused`; everything else passes."""

    def __init__(self, upstream: str):
        self.unreadable: set[int] = set()
        self.unwritable: set[int] = set()
        self.refusals_left: dict[int, int] = {}
        self.list_refused = False
        self.performance_refused = False
        super().__init__(upstream)

    def reshape(self, request: Request, answer: requests.Response, headers: dict) -> bytes:
        if self._refuses(request):
            headers["Content-Type"] = "application/json"
            answer.status_code = 403
            refusal = {"ps_api_response_code": 1002, "ps_api_response_message": "refused (test)"}
            return json.dumps(refusal).encode()
        return answer.content

    def _refuses(self, request: Request) -> bool:
        if request.path == "/buyers/v2/surveys":
            return request.method == "GET" and self.list_refused
        if _PERFORMANCE.match(request.path):
            return self.performance_refused
        if not _SURVEY.match(request.path):
            return False
        survey = int(request.path.rsplit("/", 1)[-1])
        if request.method == "PUT":
            return survey in self.unwritable
        if request.method != "GET":
            return False
        if survey in self.refusals_left:
            self.refusals_left[survey] -= 1
            return self.refusals_left[survey] >= 0
        return survey in self.unreadable


class HoldingProxy(Proxy):
    """Holds each request `holds(environ)` picks `held_s` before forwarding it; `arrived` is told
    of each (under the lock), and `most_in_flight` is how many were held at once."""

    held_s = 0.1

    def __init__(self, upstream: str):
        self._lock = threading.Lock()
        self.in_flight = self.most_in_flight = 0
        super().__init__(upstream)

    def holds(self, environ) -> bool:
        raise NotImplementedError

    def arrived(self, environ) -> None:
        """Told of each held request as it arrives."""

    def _app(self, environ, start_response):
        if not self.holds(environ):
            return super()._app(environ, start_response)
        with self._lock:
            self.arrived(environ)
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            time.sleep(self.held_s)
            return super()._app(environ, start_response)
        finally:
            with self._lock:
                self.in_flight -= 1


class QuirkyProxy(Proxy):
    """Survey reads in the documented shapes (see `quirky`)."""

    def reshape(self, request: Request, answer: requests.Response, headers: dict) -> bytes:
        if request.method == "GET" and _SURVEY.match(request.path) and answer.ok:
            return json.dumps(quirky(answer.json())).encode()
        return answer.content
