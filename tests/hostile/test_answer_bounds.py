"""An answer is read within bounds: one larger than any answer of the API, or one still coming
when the request's timeout is up (a body that never ends, or one that trickles in a byte at a
time), ends the command in one sentence instead of filling the memory or holding it for ever."""

from __future__ import annotations

import gzip
import time
import tracemalloc

import pytest
import requests
from werkzeug.wrappers import Response

from surveyctl.api import ApiClient
from surveyctl.api.body import BodyTooLarge, read_body
from surveyctl.errors import ConnectionFailed

from ..loopback import LoopbackServer

KEY = "sk-live-7f3c9a1e5b2d4c6e8a0b"
MIB = 2**20


class Answering(LoopbackServer):
    """A host at 127.0.0.1 whose every answer is a 200 made by `answer()`."""

    def __init__(self, answer):
        self.answer = answer
        super().__init__(self._app)

    def _app(self, environ, start_response):
        return self.answer()(environ, start_response)


@pytest.fixture
def host():
    hosts: list[Answering] = []

    def make(answer) -> Answering:
        hosts.append(Answering(answer))
        return hosts[-1]

    yield make
    for one in hosts:
        one.stop()


def _endless(piece: bytes, pause: float):
    def pieces():
        yield b"["
        while True:
            yield piece
            time.sleep(pause)

    return lambda: Response(pieces(), content_type="application/json")


def _read(url: str, timeout: float) -> tuple[str, float]:
    client = ApiClient(url, KEY, retries=0, timeout=timeout)
    started = time.monotonic()
    try:
        with pytest.raises(ConnectionFailed) as failed:
            client.get_survey(10001)
    finally:
        client.close()
    return str(failed.value), time.monotonic() - started


def test_an_answer_larger_than_any_of_the_api_is_dropped_at_64_mib(host):
    served = host(_endless(b"1," * (MIB // 2), 0))
    message, _ = _read(served.url, timeout=30)
    assert message == (
        f"{served.url} answered GET /surveys/10001 with more than 64 MiB, more than any answer "
        "of the API; surveyctl stopped reading it"
    )


def test_an_answer_that_never_ends_is_dropped_when_the_timeout_is_up(host):
    served = host(_endless(b"1," * 1000, 0.01))
    message, took = _read(served.url, timeout=1)
    assert message == (
        f"{served.url} answered GET /surveys/10001 with a body that was still coming after 1 s "
        "(--timeout); surveyctl stopped reading it"
    )
    assert took < 5


def test_an_answer_that_trickles_in_a_byte_at_a_time_is_dropped_when_the_timeout_is_up(host):
    def trickle():
        def pieces():
            while True:
                yield b" "
                time.sleep(0.1)

        # A length announced: the body is not chunked, and each byte comes well within the
        # timeout of a read of the socket.
        return Response(
            pieces(), content_type="application/json", headers={"Content-Length": "100000"}
        )

    served = host(trickle)
    message, took = _read(served.url, timeout=1)
    assert "with a body that was still coming after 1 s (--timeout)" in message
    assert took < 5


def test_an_answer_within_bounds_is_read_whole(host):
    served = host(lambda: Response(b'{"ps_survey_id": 10001}', content_type="application/json"))
    client = ApiClient(served.url, KEY, retries=0, timeout=5)
    try:
        assert client.get_survey(10001) == {"ps_survey_id": 10001}
    finally:
        client.close()


def _streamed(url: str) -> requests.Response:
    return requests.get(f"{url}/buyers/v2/surveys/10001", stream=True, timeout=5)


def test_an_answer_of_exactly_the_largest_size_is_read_whole(host):
    served = host(lambda: Response(b"x" * 1000, content_type="application/json"))
    response = _streamed(served.url)
    read_body(response, 5, limit=1000)
    assert response.content == b"x" * 1000


def test_an_answer_one_byte_larger_than_the_largest_size_is_dropped(host):
    served = host(lambda: Response(b"x" * 1001, content_type="application/json"))
    with pytest.raises(BodyTooLarge):
        read_body(_streamed(served.url), 5, limit=1000)


def test_an_answer_that_comes_in_several_pieces_is_read_whole(host):
    def pieces():
        for piece in (b'{"ps_survey_id": ', b"10001", b"}"):
            yield piece
            time.sleep(0.05)  # each piece its own read of the socket

    served = host(lambda: Response(pieces(), content_type="application/json"))
    client = ApiClient(served.url, KEY, retries=0, timeout=5)
    try:
        assert client.get_survey(10001) == {"ps_survey_id": 10001}
    finally:
        client.close()


def test_an_answer_the_service_compressed_is_read_decompressed(host):
    compressed = gzip.compress(b'{"ps_survey_id": 10001}')
    served = host(
        lambda: Response(
            compressed, content_type="application/json", headers={"Content-Encoding": "gzip"}
        )
    )
    client = ApiClient(served.url, KEY, retries=0, timeout=5)
    try:
        assert client.get_survey(10001) == {"ps_survey_id": 10001}
    finally:
        client.close()


def test_a_compressed_answer_is_dropped_at_the_limit_without_being_decompressed_whole(host):
    # 64 KiB that decompress to 64 MiB: read a piece at a time, what is held stays far below
    # what the bytes that arrived at once decompress to (urllib3 inflates a few MiB ahead).
    bomb = gzip.compress(b"\0" * (64 * MIB))
    served = host(
        lambda: Response(
            bomb, content_type="application/json", headers={"Content-Encoding": "gzip"}
        )
    )
    response = _streamed(served.url)
    tracemalloc.start()
    try:
        with pytest.raises(BodyTooLarge):
            read_body(response, 5, limit=MIB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 32 * MIB


class _Arrived:
    """The raw answer of a body of `size` bytes that has all arrived: a read without an amount
    takes all of it, as urllib3's does."""

    def __init__(self, size: int):
        self.left = size
        self.handed = 0

    def read1(self, amt=None, decode_content=None):
        piece = bytes(min(amt or self.left, self.left))
        self.left -= len(piece)
        self.handed += len(piece)
        return piece

    read = read1

    def close(self) -> None:
        pass


def test_an_answer_that_arrived_whole_is_taken_no_further_than_a_piece_past_the_limit():
    response = requests.Response()
    response.raw = _Arrived(64 * MIB)
    with pytest.raises(BodyTooLarge):
        read_body(response, 5, limit=MIB)
    assert response.raw.handed <= MIB + 64 * 1024


class _WithoutRead1:
    """The raw answer of urllib3 2.0, which pyproject.toml allows: it has read but no read1."""

    def __init__(self, raw):
        self._raw = raw

    def read(self, *args, **kwargs):
        return self._raw.read(*args, **kwargs)


def test_an_answer_is_read_whole_with_an_urllib3_that_has_no_read1(host):
    served = host(lambda: Response(b'{"ps_survey_id": 10001}', content_type="application/json"))
    response = _streamed(served.url)
    response.raw = _WithoutRead1(response.raw)
    read_body(response, 5)
    assert response.json() == {"ps_survey_id": 10001}


def test_a_refusal_to_retry_whose_body_never_ends_does_not_hold_the_retry(host):
    # urllib3 reads the body of an attempt it retries before retrying: a 503 with a body that
    # never ends is retried all the same, and its last answer dropped when the timeout is up.
    def endless_503():
        answer = _endless(b"x" * 1000, 0.01)()
        answer.status_code = 503
        return answer

    served = host(endless_503)
    client = ApiClient(served.url, KEY, retries=1, backoff=0, timeout=1)
    started = time.monotonic()
    try:
        with pytest.raises(ConnectionFailed, match="with a body that was still coming after 1 s"):
            client.get_survey(10001)
    finally:
        client.close()
    assert time.monotonic() - started < 5


def test_a_redirect_whose_body_never_ends_is_followed_without_reading_it(host):
    def answer():
        def app(environ, start_response):
            if environ["PATH_INFO"].endswith("/final"):
                final = Response(b'{"ps_survey_id": 10001}', content_type="application/json")
                return final(environ, start_response)
            moved = _endless(b"x" * 1000, 0.01)()
            moved.status_code = 302
            moved.headers["Location"] = "/buyers/v2/final"
            return moved(environ, start_response)

        return app

    served = host(answer)
    client = ApiClient(served.url, KEY, retries=0, timeout=5)
    try:
        assert client.get_survey(10001) == {"ps_survey_id": 10001}
    finally:
        client.close()


def test_a_service_that_redirects_for_ever_is_one_sentence(host):
    def answer():
        moved = Response(b"", status=302)
        moved.headers["Location"] = "/buyers/v2/surveys/10001"
        return moved

    served = host(answer)
    message, _ = _read(served.url, timeout=5)
    assert message == (
        f"cannot reach {served.url}: it redirected the request more than 30 times "
        "(GET /surveys/10001, 1 attempt)"
    )
