"""Return links: build then verify round-trips; a known URL and secret give the known SHA-1."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from surveyctl.ops.links import (
    LinkError,
    ReturnLink,
    build_return_link,
    link_hash,
    verify_return_link,
)

# Computed once by hand: python3 -c "import hashlib; print(hashlib.sha1((URL + SECRET)
# .encode()).hexdigest())" with the URL and secret below.
KNOWN_URL = "https://market.example.com/return?st=21&transaction_id=TX-1001&quota_id=male,age-18-34"
KNOWN_SECRET = "s3cret"
KNOWN_HASH = "305bc34e9444bf2199410f067182d0430901b141"


def test_known_url_and_secret_give_the_known_sha1():
    assert link_hash(KNOWN_URL, KNOWN_SECRET) == KNOWN_HASH


def test_built_link_orders_st_then_transaction_id_then_quota_and_ends_with_the_known_hash():
    link = ReturnLink(21, "TX-1001", ("male", "age-18-34"))
    built = build_return_link("https://market.example.com/return", link, KNOWN_SECRET)
    assert built == f"{KNOWN_URL}&ps_hash={KNOWN_HASH}"


def test_sqlc_is_appended_after_the_quota_id():
    link = ReturnLink(21, "T1", ("male",), sqlc=True)
    built = build_return_link("https://m.example.com/r", link, "k")
    assert "?st=21&transaction_id=T1&quota_id=male&sqlc=true&ps_hash=" in built


def test_parameters_the_return_url_already_carries_come_after_ours():
    built = build_return_link("https://m.example.com/r?src=abc", ReturnLink(18, "T1"), "k")
    assert built.startswith("https://m.example.com/r?st=18&transaction_id=T1&src=abc&ps_hash=")
    assert verify_return_link(built, "k").status == 18


def test_sqlc_without_a_quota_id_is_refused():
    with pytest.raises(LinkError, match="sqlc needs a quota id"):
        build_return_link("https://m.example.com/r", ReturnLink(21, "T1", sqlc=True), "k")


def test_verify_returns_the_content_of_a_good_link():
    built = build_return_link(
        "https://m.example.com/r", ReturnLink(21, "T 1/x", ("a", "b"), sqlc=True), "k"
    )
    content = verify_return_link(built, "k")
    assert content == ReturnLink(21, "T 1/x", ("a", "b"), sqlc=True)
    assert content.status_name == "complete"


def test_verify_refuses_a_link_signed_with_another_secret():
    built = build_return_link("https://m.example.com/r", ReturnLink(21, "T1"), "right")
    with pytest.raises(LinkError, match="ps_hash does not match"):
        verify_return_link(built, "wrong")


def test_verify_refuses_a_link_whose_status_was_altered():
    built = build_return_link("https://m.example.com/r", ReturnLink(18, "T1"), "k")
    with pytest.raises(LinkError, match="ps_hash does not match"):
        verify_return_link(built.replace("st=18", "st=21"), "k")


def test_verify_refuses_a_link_without_ps_hash():
    with pytest.raises(LinkError, match="no ps_hash"):
        verify_return_link("https://m.example.com/r?st=21&transaction_id=T1", "k")


def test_verify_accepts_an_uppercase_hex_hash():
    unsigned = "https://m.example.com/r?st=17&transaction_id=T9"
    digest = hashlib.sha1((unsigned + "k").encode()).hexdigest().upper()
    assert verify_return_link(f"{unsigned}&ps_hash={digest}", "k").status == 17


def _signed(unsigned: str, secret: str = "k") -> str:
    return f"{unsigned}&ps_hash={hashlib.sha1((unsigned + secret).encode()).hexdigest()}"


def test_verify_refuses_a_signed_link_whose_st_is_no_return_status():
    with pytest.raises(LinkError) as refused:
        verify_return_link(_signed("https://m.example.com/r?st=99&transaction_id=T1"), "k")
    assert str(refused.value) == (
        "the hash matches, but st 99 is not a return status (one of [17, 18, 20, 21, 30]): the "
        "marketplace refuses the link"
    )


def test_verify_of_a_signed_link_without_transaction_id_says_it_is_missing():
    with pytest.raises(LinkError) as refused:
        verify_return_link(_signed("https://m.example.com/r?st=21"), "k")
    assert str(refused.value) == "the hash matches, but the link has no transaction_id"


def test_verify_refuses_a_link_carrying_ps_hash_twice():
    # Which of the two would the marketplace check? Neither is taken on trust.
    signed = _signed("https://m.example.com/r?st=21&transaction_id=T1")
    with pytest.raises(LinkError, match="the link carries ps_hash more than once"):
        verify_return_link(f"{signed}&ps_hash=0", "k")


def test_verify_refuses_a_signed_link_whose_first_parameters_are_not_st_and_transaction_id():
    with pytest.raises(LinkError) as refused:
        verify_return_link(_signed("https://m.example.com/r?transaction_id=T1&st=21"), "k")
    assert str(refused.value) == (
        "the hash matches, but st and transaction_id are not the first parameters"
    )


def test_verify_refuses_a_signed_link_whose_st_is_not_a_number():
    with pytest.raises(LinkError) as refused:
        verify_return_link(_signed("https://m.example.com/r?st=done&transaction_id=T1"), "k")
    assert str(refused.value) == "st 'done' is not a status code"


@pytest.mark.parametrize("check", [build_return_link, verify_return_link])
def test_an_empty_shared_secret_is_refused(check):
    arguments = ("https://m.example.com/r", ReturnLink(21, "T1"))
    if check is verify_return_link:
        arguments = (_signed("https://m.example.com/r?st=21&transaction_id=T1", ""),)
    with pytest.raises(LinkError, match="the shared secret is empty"):
        check(*arguments, "")


def test_a_link_with_a_status_that_is_no_return_status_is_not_built():
    with pytest.raises(LinkError, match=r"st 99 is not one of \[17, 18, 20, 21, 30\]"):
        build_return_link("https://m.example.com/r", ReturnLink(99, "T1"), "k")


@pytest.mark.parametrize("url", ["ftp://m.example.com/r", "m.example.com/r", "https:///r"])
def test_a_link_is_built_only_on_an_http_url(url):
    with pytest.raises(LinkError, match="is not an http\\(s\\) URL"):
        build_return_link(url, ReturnLink(21, "T1"), "k")


@settings(max_examples=60, deadline=None)
@given(
    status=st.sampled_from([17, 18, 20, 21, 30]),
    # Text, not half characters (refused, test_link_cli.py).
    transaction_id=st.text(st.characters(codec="utf-8"), min_size=1, max_size=30),
    # A comma separates the ids of quota_id: an id cannot hold one (refused, below).
    quotas=st.lists(
        st.text(st.characters(codec="utf-8", exclude_characters=","), min_size=1, max_size=10),
        max_size=3,
    ),
    secret=st.text(st.characters(codec="utf-8"), min_size=1, max_size=20),
)  # fmt: skip
def test_any_built_link_verifies_with_its_secret(status, transaction_id, quotas, secret):
    link = ReturnLink(status, transaction_id, tuple(quotas), sqlc=bool(quotas))
    built = build_return_link("https://m.example.com/return", link, secret)
    assert verify_return_link(built, secret) == link


def test_a_quota_id_holding_a_comma_cannot_be_named_in_a_link():
    with pytest.raises(LinkError) as refused:
        build_return_link("https://m.example.com/r", ReturnLink(21, "T1", ("a,b",)), "k")
    assert str(refused.value) == (
        "quota id 'a,b' holds a comma, which separates the ids of quota_id (encoded or not): "
        "it cannot be named in a return link"
    )


def test_an_encoded_comma_in_quota_id_separates_ids_as_the_marketplace_reads_it():
    link = verify_return_link(
        _signed("https://m.example.com/r?st=21&transaction_id=T1&quota_id=male%2Cfemale"), "k"
    )
    assert link.quota_ids == ("male", "female")


def test_a_link_without_a_transaction_id_is_refused():
    with pytest.raises(LinkError, match="the transaction id is empty"):
        build_return_link("https://m.example.com/r", ReturnLink(21, ""), "k")


@pytest.mark.parametrize("name", ["st", "transaction_id", "quota_id", "sqlc"])
def test_a_return_url_that_already_carries_a_parameter_of_the_link_is_refused(name):
    # Two st= in one link: which one the marketplace would read is not shown anywhere.
    with pytest.raises(LinkError, match=f"already carries {name}, which the link sets"):
        build_return_link(f"https://m.example.com/r?{name}=1", ReturnLink(21, "T1"), "k")


# -- what the return URL and the link may carry ----------------------------------------------


def test_a_stale_ps_hash_on_the_return_url_is_replaced_not_kept():
    built = build_return_link("https://m.example.com/r?ps_hash=0bad", ReturnLink(21, "T1"), "k")
    assert built.count("ps_hash=") == 1
    assert verify_return_link(built, "k") == ReturnLink(21, "T1")


def test_a_slash_in_the_transaction_id_is_encoded():
    built = build_return_link("https://m.example.com/r", ReturnLink(21, "a/b"), "k")
    assert built.startswith("https://m.example.com/r?st=21&transaction_id=a%2Fb&ps_hash=")


def test_a_fragment_of_the_return_url_is_left_out_of_the_link():
    built = build_return_link("https://m.example.com/r#top", ReturnLink(21, "T1"), "k")
    assert built.startswith("https://m.example.com/r?st=21&transaction_id=T1&ps_hash=")
    assert "#" not in built


def test_a_fragment_after_a_link_is_not_part_of_what_is_signed():
    # A browser never sends the fragment: the marketplace hashes the link without it.
    built = build_return_link("https://m.example.com/r", ReturnLink(21, "T1"), "k")
    assert verify_return_link(built + "#top", "k") == ReturnLink(21, "T1")


def test_a_link_whose_second_parameter_is_not_transaction_id_is_refused():
    unsigned = "https://m.example.com/r?st=21&quota_id=a&transaction_id=T1"
    signed = f"{unsigned}&ps_hash={hashlib.sha1((unsigned + 'k').encode()).hexdigest()}"
    with pytest.raises(LinkError) as refused:
        verify_return_link(signed, "k")
    assert str(refused.value) == (
        "the hash matches, but st and transaction_id are not the first parameters"
    )


def test_sqlc_is_read_in_any_case():
    unsigned = "https://m.example.com/r?st=21&transaction_id=T1&quota_id=a&sqlc=TRUE"
    signed = f"{unsigned}&ps_hash={hashlib.sha1((unsigned + 'k').encode()).hexdigest()}"
    assert verify_return_link(signed, "k").sqlc is True


def test_the_hash_is_over_the_utf_8_bytes_of_a_secret_that_is_not_ascii():
    built = build_return_link("https://m.example.com/r", ReturnLink(21, "T1"), "clé-✓")
    unsigned, _, given = built.partition("&ps_hash=")
    assert given == hashlib.sha1((unsigned + "clé-✓").encode("utf-8")).hexdigest()
