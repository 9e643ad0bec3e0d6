"""Runs and sweeps in a Jupyter notebook (issue 48): their HTML and text
representations, and examples/notebook.ipynb executed by a real kernel."""

from __future__ import annotations

import base64
import html.parser
import json
import sys
from pathlib import Path

import cclab
import pytest
from cclab import notebook
from cclab.cli import format_sweep

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "examples" / "notebook.ipynb"
SHORT = {"run.duration": "2s", "run.warmup": "0.5s"}


class Page(html.parser.HTMLParser):
    """The text of an HTML fragment, failing on a tag closed out of order or left open."""

    VOID = {"img", "br", "hr", "input", "meta", "link"}

    def __init__(self, markup: str) -> None:
        super().__init__()
        self.open: list[str] = []
        self.text: list[str] = []
        self.images: list[dict[str, str | None]] = []
        self.feed(markup)
        self.close()
        assert self.open == [], f"tags left open: {self.open}"

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "img":
            self.images.append(dict(attrs))
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.open and self.open[-1] == tag, f"</{tag}> closes {self.open[-1:] or 'nothing'}"
        self.open.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def cells(self) -> str:
        return "|".join(t for t in self.text if t.strip())


def is_png(image: dict[str, str | None]) -> bool:
    prefix = "data:image/png;base64,"
    src = image.get("src") or ""
    return src.startswith(prefix) and base64.b64decode(src[len(prefix) :]).startswith(b"\x89PNG\r\n\x1a\n")


def test_a_run_shows_its_header_flows_links_and_cwnd() -> None:
    scn = cclab.load(ROOT / "examples/dumbbell.toml").with_(**SHORT, **{"run.sample": "100ms"})
    res = cclab.run(scn, seed=5)
    page = Page(res._repr_html_())
    cells = page.cells()
    wall = res.summary["wall_s"]
    assert f"scenario dumbbell  seed 5  simulated 2 s (statistics over 0.5-2 s)  wall {wall:.3f} s" in cells
    for f in res.flows.iter_rows(named=True):
        row = f"{f['name']}[{f['index']}]|for|reno/sack|{f['goodput_bps'] / 1e6:.3f}|{f['throughput_bps'] / 1e6:.3f}"
        assert row in cells, cells
    # The bottleneck directions, as cclab run prints them; "->" escaped in the markup and read back.
    bottleneck = res.links.filter(res.links["role"] == "bottleneck").row(0, named=True)
    assert f"left->right|bottleneck|{bottleneck['utilization'] * 100:.2f}%|{bottleneck['drops']}|" in cells
    assert "(8 access links not shown; .links lists them)" in cells
    assert len(page.images) == 1 and is_png(page.images[0])


def test_a_run_without_samples_has_no_figure_and_its_text_is_cclab_runs() -> None:
    from cclab.cli import format_summary

    res = cclab.run(cclab.load(ROOT / "examples/dumbbell.toml").with_(**SHORT), seed=5)
    assert Page(res._repr_html_()).images == []
    pretty = pytest.importorskip("IPython.lib.pretty")
    # Not the dataclass repr, which holds the whole summary (hundreds of kB once sampled).
    assert pretty.pretty(res) == format_summary(res)


def test_many_flows_are_cut_to_the_first_rows_and_counted() -> None:
    scn = cclab.load(ROOT / "examples/dumbbell.toml").with_(
        **SHORT, **{"run.sample": "500ms", "flows[0].count": 30, "topology.bottleneck.rate": "20Mbps"}
    )
    res = cclab.run(scn)
    cells = Page(res._repr_html_()).cells()
    shown = [i for i in range(30) if f"|bulk[{i}]|" in f"|{cells}|"]
    assert shown == list(range(notebook.ROWS)), shown
    assert f"... and {30 - notebook.ROWS} more flows (.flows has every row)" in cells
    fig = notebook.run_figure(res)
    assert fig is not None and len(fig.axes[0].lines) == notebook.FIGURE_FLOWS


def test_text_from_the_results_is_escaped() -> None:
    text = cclab.load(ROOT / "examples/dumbbell.toml").with_(**SHORT).to_toml()
    res = cclab.run(cclab.Scenario.from_toml(text.replace('name = "dumbbell"', 'name = "<b>a&b</b>"'), name="x"))
    markup = res._repr_html_()
    assert "<b>a&b</b>" not in markup and "&lt;b&gt;a&amp;b&lt;/b&gt;" in markup
    assert "scenario <b>a&b</b>" in Page(markup).cells()


def test_a_sweep_shows_its_table_per_point_notes_and_a_figure() -> None:
    scn = cclab.load(ROOT / "examples/dumbbell.toml").with_(**SHORT)
    grid = {"topology.bottleneck.rate": ["20Mbps", "50Mbps"], "flows[0].recovery": ["newreno", "sack"]}
    sw = cclab.sweep(scn, grid=grid, replications=2, progress=False)
    sw.notes.append("a note with <markup> & more")
    page = Page(sw._repr_html_())
    cells = page.cells()
    assert "sweep of topology.bottleneck.rate = 20Mbps, 50Mbps; flows[0].recovery = newreno, sack: " in cells
    assert "4 points x 2 replications, 8 runs" in cells
    table = sw.aggregate(metrics=notebook.SWEEP_METRICS)
    for r in table.iter_rows(named=True):
        row = f"{r['topology.bottleneck.rate']}|{r['flows[0].recovery']}|{r['name']}[{r['index']}]|2|"
        assert f"{row}{r['goodput_bps_mean'] / 1e6:.3f}|" in cells, (row, cells)
    assert "note: a note with <markup> & more" in cells
    assert len(page.images) == 1 and is_png(page.images[0])
    pretty = pytest.importorskip("IPython.lib.pretty")
    assert format_sweep(table, sw.grid) in pretty.pretty(sw)


def test_a_sweep_with_many_rows_is_cut_and_has_no_figure_without_a_grid() -> None:
    scn = cclab.load(ROOT / "examples/dumbbell.toml").with_(**SHORT, **{"flows[0].count": 25})
    sw = cclab.sweep(scn, replications=1, progress=False)
    page = Page(sw._repr_html_())
    assert f"... and {25 - notebook.ROWS} more rows (.summary has every row)" in page.cells()
    assert page.images == []


# --- The example notebook, run by a kernel as Jupyter would ------------------------------------


def test_the_committed_notebook_has_no_outputs() -> None:
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert code and all(c["outputs"] == [] and c["execution_count"] is None for c in code)


def test_the_example_notebook_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        import ipykernel  # noqa: F401 - the kernel runs it
        import nbclient
        import nbformat
    except ImportError as e:
        pytest.skip(f"needs nbclient, nbformat and ipykernel (pip install '.[test]'): {e}")
    # The kernel is this interpreter, whatever other "python3" kernel the machine has: it then
    # imports the cclab under test (installed, or on PYTHONPATH, which the kernel inherits).
    spec = tmp_path / "kernels" / "python3"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "cclab tests", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("import cclab; print(cclab.__file__)"))
    # The notebook's directory, where Jupyter starts its kernel.
    client = nbclient.NotebookClient(nb, timeout=600, startup_timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOK.parent)}})  # fmt: skip
    client.execute()  # raises CellExecutionError, naming the cell, on any error

    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert outputs[-1]["text"].strip() == cclab.__file__, "the kernel imported another cclab"
    assert not [o for o in outputs if o["output_type"] == "error"]
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert any('class="cclab-result"' in h for h in html), "a Result shows as HTML"
    assert any('class="cclab-sweep"' in h for h in html), "a SweepResult shows as HTML"
    assert any('class="cclab-progress"' in h and "12/12 runs" in h for h in html), "the sweep's progress bar"
    figures = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(figures) == 2, "plot.goodput and plot.sweep draw in the notebook"
