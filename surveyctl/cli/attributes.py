"""`surveyctl attributes`: the attribute catalogue of a locale, every page, de-duplicated.

Without `--class` the full catalogue comes from the per-environment cache that manifests use
(`.surveyctl/cache/catalog/`), fetched when missing or stale. With `--class` the service
filters, and the answer is not cached, so a filtered list never stands in for the full one.
"""

from __future__ import annotations

import sys
from dataclasses import asdict

import click

from surveyctl.catalog import Attribute
from surveyctl.cli.console import console as make_console
from surveyctl.cli.console import plain_table
from surveyctl.cli.context import CliContext, pass_context
from surveyctl.cli.options import format_option, int_list
from surveyctl.jsontext import dumps
from surveyctl.ops.rows import make_writer


def _classes(ctx: click.Context, param: click.Parameter, value: str | None) -> list[int] | None:
    classes = int_list(ctx, param, value)
    if not set(classes) <= {1, 2, 3}:
        raise click.BadParameter("classes are 1 (core), 2 (extended) and 3 (custom)")
    return list(classes) or None


def _matches(attribute: Attribute, needle: str) -> bool:
    needle = needle.casefold()
    texts = [attribute.desc, attribute.text, str(attribute.qualification_code)]
    texts += [a.local_text for a in attribute.answers] + [a.eng_text for a in attribute.answers]
    return any(needle in text.casefold() for text in texts)


@click.command(name="attributes")
@click.option(
    "--locale", default="en_US", show_default=True, metavar="LOCALE", help="Locale, e.g. en_US."
)
@click.option(
    "--class",
    "classes",
    callback=_classes,
    help="Only attributes of these classes, comma-separated: 1 core, 2 extended, 3 custom "
    "(e.g. 1,2; default: all).",
)
@click.option("--search", help="Only attributes whose name, question or answers contain TEXT.")
@format_option("table", "tsv", "json")
@click.option(
    "--raw-cells",
    is_flag=True,
    # Its own words, not the shared option's: this command writes tsv, never csv.
    help="tsv: write names and questions exactly as the service gave them. By default a cell "
    "starting with =, +, -, @, a tab or a carriage return gets a leading ' so that a "
    "spreadsheet shows it instead of running it as a formula.",
)
@click.option(
    "--refresh-catalog",
    "--refresh",
    "refresh",
    is_flag=True,
    help="Fetch the attribute catalogue even if cached.",
)
@pass_context
def attributes(
    ctx: CliContext,
    locale: str,
    classes: list[int] | None,
    search: str | None,
    output_format: str,
    raw_cells: bool,
    refresh: bool,
) -> None:
    """The qualifications a survey of LOCALE can target, with their answer codes."""
    catalog = ctx.catalog(refresh=refresh, classes=classes)
    found = sorted(catalog.locale(locale).by_code.values(), key=lambda a: a.qualification_code)
    if search:
        found = [a for a in found if _matches(a, search)]
    if output_format == "json":
        click.echo(dumps([asdict(a) for a in found]))
    elif output_format == "tsv":
        _print_tsv(found, raw_cells)
    else:
        _print_table(found)
    # The cache may have answered without a connection; name the environment all the same.
    click.echo(f"{len(found)} attribute(s) in {locale}, {ctx.environment().describe()}", err=True)


def _answers(attribute: Attribute) -> str:
    return ", ".join(f"{a.condition_code}={a.eng_text or a.local_text}" for a in attribute.answers)


_TSV_COLUMNS = ["code", "name", "question", "answers"]


def _print_tsv(found: list[Attribute], raw_cells: bool) -> None:
    # The writer of every csv and tsv: a question a spreadsheet would run as a formula (the
    # catalogue's texts are written by others) is made inert, and one holding a line break
    # stays in its row.
    writer = make_writer("tsv", sys.stdout, raw_cells)
    writer.begin(_TSV_COLUMNS)
    writer.rows([dict(zip(_TSV_COLUMNS, _tsv_cells(a), strict=True)) for a in found])
    writer.end()


def _tsv_cells(attribute: Attribute) -> tuple[int, str, str, str]:
    return attribute.qualification_code, attribute.desc, attribute.text, _answers(attribute)


def _print_table(found: list[Attribute]) -> None:
    if not found:  # the count on stderr says so; stdout stays empty, as every list leaves it
        return
    table = plain_table()
    table.add_column("code", justify="right")
    table.add_column("name")
    table.add_column("question", overflow="fold")
    table.add_column("answers (condition_code=text)", overflow="fold")
    for attribute in found:
        answers = _answers(attribute)
        table.add_row(
            str(attribute.qualification_code),
            attribute.desc,
            attribute.text,
            answers or "(free entry)",
        )
    make_console().print(table)
