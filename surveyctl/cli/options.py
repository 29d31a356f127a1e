"""Option types that several commands share."""

from __future__ import annotations

import click


def int_list(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[int, ...]:
    """A click callback reading `12,13` as (12, 13); empty when the option is not given."""
    if not value:
        return ()
    try:
        return tuple(int(part) for part in value.split(",") if part.strip())
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a comma-separated list of integers") from None
