"""`surveyctl text-check`: the open-ended response check of free-text answers (spec 4.7)."""

from __future__ import annotations

from pathlib import Path

import click

from surveyctl.cli.console import console as make_console
from surveyctl.cli.console import plain_table
from surveyctl.cli.context import CliContext, pass_context
from surveyctl.cli.options import FilePath, format_option
from surveyctl.jsontext import dumps
from surveyctl.ops.textcheck import (
    FLAGS,
    AnswerFlags,
    CheckStopped,
    check_answers,
    load_answers,
)


@click.command(name="text-check")
@click.argument("transaction_id")
@click.option(
    "--answers",
    "answers_path",
    required=True,
    type=FilePath(dir_okay=False, path_type=Path),
    help="JSON list of {question_id, text}, or CSV with columns question_id,text.",
)
@format_option("table", "json")
@pass_context
def text_check(
    ctx: CliContext, transaction_id: str, answers_path: Path, output_format: str
) -> None:
    """Check the free-text answers of TRANSACTION_ID: one row of flags per answer.

    Answers are sent in batches of at most 20, the service's limit per call.
    """
    answers = load_answers(answers_path)
    try:
        results = check_answers(ctx.client(), transaction_id, answers)
    except CheckStopped as stopped:
        # The verdicts already given are shown: they cannot be asked for again.
        _show(transaction_id, stopped.results, output_format, [a.question_id for a in stopped.left])
        raise
    _show(transaction_id, results, output_format)


def _show(
    transaction_id: str,
    results: list[AnswerFlags],
    output_format: str,
    left: list[str] | None = None,
) -> None:
    if output_format == "json":
        payload = {"transaction_id": transaction_id, "data": [r.as_dict() for r in results]}
        if left is not None:
            payload["not_checked"] = left
        click.echo(dumps(payload))
        return
    table = plain_table()
    table.add_column("question_id")
    for _, label in FLAGS:
        table.add_column(label, justify="center")
    table.add_column("text", overflow="fold")  # whole: a flagged answer is read in full
    for result in results:
        marks = ["yes" if result.flags.get(key) else "-" for key, _ in FLAGS]
        table.add_row(result.question_id, *marks, result.text)
    make_console().print(table)
    flagged = sum(1 for r in results if r.raised)
    click.echo(f"{len(results)} answer(s) checked, {flagged} flagged", err=True)
