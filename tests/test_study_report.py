"""The report vocabulary renders Markdown exactly as the committed study reports have it."""

from __future__ import annotations

import polars as pl
from cclab.studies.report import (
    Claim,
    Column,
    blocks,
    bullets,
    claim_list,
    claim_table,
    document,
    estimate,
    figure,
    heading,
    lines,
    section,
    table,
    value,
    verdict,
)


def test_a_document_separates_blocks_by_blank_lines_flattens_sections_and_leaves_out_none() -> None:
    text = document(heading("Title", 1), section("One", "a", None, ["b", [figure("Fig. 1", "figures/f.png")]]), None)
    assert text == "# Title\n\n## One\n\na\n\nb\n\n![Fig. 1](figures/f.png)\n"
    assert blocks("x", [], [None, "y"]) == ["x", "y"]
    assert section("Sub", "text", level=3) == ["### Sub", "text"]


def test_lines_and_bullets_keep_their_items_on_consecutive_lines() -> None:
    assert lines("Intro:", bullets(["one", "two"])) == "Intro:\n- one\n- two"


def test_a_table_from_a_data_frame_formats_each_column() -> None:
    frame = pl.DataFrame({"name": ["a", "b"], "rate": [1.234, 10.0], "x_mean": [2.0, 3.0], "x_ci95": [0.5, None]})
    text = table(frame, [value("name", "name"), value("rate", "rate", ".1f"), estimate("x", "x", 2)])
    assert text == "| name | rate | x |\n|---|---|---|\n| a | 1.2 | 2.00 ± 0.50 |\n| b | 10.0 | 3.00 |"


def test_a_table_of_any_rows_takes_its_cells_from_functions_and_an_empty_label_leaves_the_corner_blank() -> None:
    text = table([1, 2], [Column("", lambda n: f"n = {n}"), Column("square", lambda n: str(n * n))])
    assert text == "| | square |\n|---|---|\n| n = 1 | 1 |\n| n = 2 | 4 |"


def test_claims_render_as_a_table_in_the_labels_order_or_as_a_list() -> None:
    claims = [Claim("rate", ours="49.1", paper="about 49", verdict=verdict(True)), Claim("buffer", ours="4 KB")]
    assert claim_table(claims, {"claim": "", "paper": "paper", "ours": "ours", "verdict": "verdict"}) == (
        "| | paper | ours | verdict |\n|---|---|---|---|\n| rate | about 49 | 49.1 | agrees |\n| buffer |  | 4 KB |  |"
    )
    assert claim_list(claims) == "- **rate** (agrees). 49.1\n- **buffer**. 4 KB"
    assert verdict(False) == "differs"
