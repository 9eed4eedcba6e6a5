#!/usr/bin/env python3
"""Draws onelearn's result files as PNG pictures with matplotlib.

usage: scripts/plot.py FILE [-o OUT.png] [--kind curves|search|bench] [--title TEXT]
                            [--mode max|min] [--note TEXT|auto]

What FILE may be (recognised from its content; --kind forces one):
  curves  training curves, one panel per metric with its val_ twin:
          - a CSVLogger file (nn/callbacks.hpp): header "epoch,<metrics sorted>", "NA" where a
            metric was not logged, any one-character separator;
          - a History as JSON: {"epoch": [...], "history": {"loss": [...], ...}} (the fields of
            nn::History) or Keras's {"loss": [...], "val_loss": [...]};
          - with --kind curves, any CSV: its numeric columns against its first column.
  search  a search's score against each of its parameters:
          - GridSearchCV / RandomizedSearchCV / HalvingGridSearchCV cv_results() written by
            to_csv or to_json (mean_test_score with std_test_score as error bars, the best
            candidate starred, halving iterations in colours);
          - tune::run's Results written by to_csv or to_json (ok and stopped trials drawn,
            failed ones counted in the title), plus the score by trial with the best so far.
  bench   the ratios onelearn / anchor per workload, from the JSON lines bench/compare.py
          prints (its "speedup_<policy>" fields: the anchor's seconds over onelearn's, so above
          1 is faster than the anchor). onelearn-bench's own lines have no anchor in them: run
          them through bench/compare.py first.

OUT defaults to FILE with the extension .png. It is written to a temporary name in its
folder and renamed, so a failed run leaves no half-written picture. --note puts a line of text
under the picture ("auto": today's date and this machine's processor, for a chart of a run
made here, as the README's benchmark chart shows).

Errors (a missing or unreadable file, a format it does not know, no numeric values to draw)
print one line "plot.py: error: ..." and exit with status 2; so does a missing matplotlib.
"""
import argparse
import csv
import datetime
import io
import json
import math
import os
import platform
import sys
import tempfile

EXIT_ERROR = 2


class PlotError(Exception):
    """A problem with the input: reported as one line, exit status 2."""


# ---- reading --------------------------------------------------------------------------------

def read_text(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        raise PlotError(f"cannot read '{path}': no such file")
    except IsADirectoryError:
        raise PlotError(f"cannot read '{path}': it is a directory")
    except UnicodeDecodeError:
        raise PlotError(f"cannot read '{path}': not UTF-8 text (a binary file?)")
    except OSError as e:
        raise PlotError(f"cannot read '{path}': {e.strerror}")


def number(text):
    """A CSV cell as a float: NaN for the empty cells, "NA", "nan" and "null" that onelearn's
    writers use for missing values; None for text."""
    t = text.strip()
    if t == "" or t.lower() in ("na", "nan", "null", "none"):
        return math.nan
    if t.lower() == "true":
        return None  # a boolean parameter is a category, not the number 1
    try:
        return float(t)
    except ValueError:
        return None


def parse_json(text):
    """The document as one JSON value, or a list of values for JSON lines; None otherwise."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        pass
    rows = []
    for line in stripped.splitlines():
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            return None
    return rows


def parse_csv(text):
    """(header, rows) with the separator sniffed among , ; tab |; None when it is no table."""
    lines = [l for l in text.splitlines() if l.strip()]
    if len(lines) < 2:
        return None
    first = lines[0]
    # CSVLogger may use another separator: the one right after its "epoch" column tells.
    candidates = [c for c in ",;\t|" if c in first]
    if not candidates:
        return None
    sep = max(candidates, key=first.count)
    reader = csv.reader(io.StringIO(text), delimiter=sep)
    rows = [r for r in reader if any(cell.strip() for cell in r)]
    header = [h.strip() for h in rows[0]]
    body = rows[1:]
    if len(header) < 2 or not body:
        return None
    for i, r in enumerate(body):
        if len(r) != len(header):
            raise PlotError(f"expected {len(header)} fields per row (as the header), found "
                            f"{len(r)} on data row {i + 1}")
    return header, body


def column(header, rows, name):
    j = header.index(name)
    return [r[j] for r in rows]


# ---- recognising ----------------------------------------------------------------------------

def detect(text, path):
    """(kind, data) where kind is curves/search/bench and data what its drawer takes."""
    doc = parse_json(text)
    if isinstance(doc, dict):
        if isinstance(doc.get("trials"), list):
            return "search", ("tune_json", doc)
        if "mean_test_score" in doc:
            return "search", ("cv_json", doc)
        if isinstance(doc.get("history"), dict) or all(isinstance(v, list) for v in doc.values()):
            return "curves", ("history", doc)
    if isinstance(doc, list) and doc and all(isinstance(r, dict) for r in doc):
        if any(k.startswith("speedup_") for r in doc for k in r):
            return "bench", doc
        if any(r.get("impl") == "onelearn" for r in doc):
            raise PlotError("these are onelearn-bench's own lines, which carry no anchor "
                            "figures: run bench/compare.py and plot its output")
    if doc is not None:
        raise PlotError(f"unknown format of '{path}': JSON that is neither a History, a search's "
                        "results nor bench/compare.py's lines")
    table = parse_csv(text)
    if table is None:
        raise PlotError(f"unknown format of '{path}': expected a CSV table (CSVLogger, "
                        "cv_results, tune results) or JSON")
    header, rows = table
    if header[0] == "epoch":
        return "curves", ("table", header, rows)
    if "mean_test_score" in header:
        return "search", ("cv_csv", header, rows)
    if header[:3] == ["trial_id", "status", "score"]:
        return "search", ("tune_csv", header, rows)
    raise PlotError(f"unknown format of '{path}': a CSV whose columns ({', '.join(header[:4])}"
                    f"{', ...' if len(header) > 4 else ''}) are none of onelearn's; pass "
                    "--kind curves to draw its numeric columns against the first")


# ---- drawing --------------------------------------------------------------------------------

def grid_of(plt, n, width=6.0, height=3.2):
    cols = 1 if n == 1 else 2
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    flat = [a for row in axes for a in row]
    for extra in flat[n:]:
        extra.set_visible(False)
    return fig, flat[:n]


def finite(values):
    return [v for v in values if v is not None and not math.isnan(v)]


def wide_positive(values):
    """Log scale when the values are positive and span two decades or more."""
    v = finite(values)
    return bool(v) and min(v) > 0 and max(v) / min(v) >= 100


def curves_series(data):
    """(x label, x values, {metric: values}) from a CSVLogger table or a History."""
    if data[0] == "table":
        _, header, rows = data
        x = [number(v) for v in column(header, rows, header[0])]
        if any(v is None for v in x):
            raise PlotError(f"expected numbers in the first column '{header[0]}', found text")
        series = {}
        for name in header[1:]:
            values = [number(v) for v in column(header, rows, name)]
            if any(v is None for v in values):
                continue  # a text column: nothing to draw
            series[name] = values
        return header[0], x, series
    doc = data[1]
    history = doc["history"] if isinstance(doc.get("history"), dict) else doc
    series = {}
    for name, values in history.items():
        if name == "epoch" or not isinstance(values, list):
            continue
        if all(isinstance(v, (int, float)) or v is None for v in values):
            series[name] = [math.nan if v is None else float(v) for v in values]
    length = max((len(v) for v in series.values()), default=0)
    epochs = doc.get("epoch") if isinstance(doc.get("epoch"), list) else list(range(length))
    for name, values in series.items():
        if len(values) != len(epochs):
            raise PlotError(f"expected {len(epochs)} values of '{name}' (one per epoch), found "
                            f"{len(values)}")
    return "epoch", [float(e) for e in epochs], series


def draw_curves(plt, data, title):
    xlabel, x, series = curves_series(data)
    series = {k: v for k, v in series.items() if finite(v)}
    if not series:
        raise PlotError("no numeric columns to draw (every value is missing or text)")
    # A metric and its validation twin share a panel, as Keras's plots do.
    panels = {}
    for name in series:
        base = name[4:] if name.startswith("val_") and name[4:] in series else name
        panels.setdefault(base, []).append(name)
    fig, axes = grid_of(plt, len(panels))
    for ax, (base, names) in zip(axes, panels.items()):
        for name in sorted(names, key=lambda n: n.startswith("val_")):
            ax.plot(x, series[name], marker="o", markersize=3,
                    label="validation" if name.startswith("val_") else "training")
        ax.set_title(base)
        ax.set_xlabel(xlabel)
        if len(names) > 1:
            ax.legend()
        if wide_positive(series[base] if base in series else series[names[0]]):
            ax.set_yscale("log")
        ax.grid(alpha=0.3)
    fig.suptitle(title or "training curves")
    return fig


def search_table(data, mode):
    """Rows of {'params': {name: cell text or value}, 'score', 'std', 'group', 'best', 'status',
    'id'} and what the table says about itself. `mode` (max or min) picks a tune::run CSV's best
    trial; its JSON names its own mode."""
    kind = data[0]
    out = []
    info = {"kind": kind, "mode": mode, "failed": 0}
    if kind == "cv_csv":
        _, header, rows = data
        names = [h[len("param_"):] for h in header if h.startswith("param_")]
        for r in rows:
            cell = dict(zip(header, r))
            out.append({
                "params": {n: cell["param_" + n] for n in names if cell["param_" + n] != ""},
                "score": number(cell["mean_test_score"]),
                "std": number(cell.get("std_test_score", "")),
                "group": cell.get("iter"),
                "best": cell.get("rank_test_score", "").strip() == "1",
                "status": "ok"})
    elif kind == "cv_json":
        doc = data[1]
        n = len(doc["mean_test_score"])
        params = doc.get("params") or [{} for _ in range(n)]
        std = doc.get("std_test_score") or [None] * n
        ranks = doc.get("rank_test_score") or [None] * n
        groups = doc.get("iter") or [None] * n
        for i in range(n):
            score = doc["mean_test_score"][i]
            out.append({"params": params[i],
                        "score": math.nan if score is None else float(score),
                        "std": math.nan if std[i] is None else float(std[i]),
                        "group": None if groups[i] is None else str(groups[i]),
                        "best": ranks[i] == 1, "status": "ok"})
    elif kind == "tune_csv":
        _, header, rows = data
        names = header[3:header.index("n_reports")] if "n_reports" in header else header[3:]
        for r in rows:
            cell = dict(zip(header, r))
            out.append({"params": {n: cell[n] for n in names if cell[n] != ""},
                        "score": number(cell["score"]), "std": math.nan, "group": None,
                        "best": False, "status": cell["status"], "id": number(cell["trial_id"])})
    else:  # tune_json
        doc = data[1]
        info["mode"] = doc.get("mode", mode)
        for t in doc["trials"]:
            score = t.get("score")
            out.append({"params": t.get("params", {}),
                        "score": math.nan if score is None else float(score), "std": math.nan,
                        "group": None, "best": False, "status": t.get("status", "ok"),
                        "id": float(t.get("trial_id", len(out)))})
    if kind.startswith("tune"):
        info["failed"] = sum(1 for r in out if r["status"] == "failed")
        # As Results::best(): completed trials only (a stopped one's score is intermediate).
        drawn = [r for r in out if r["status"] == "ok" and not math.isnan(r["score"])]
        if drawn:
            pick = max if info["mode"] == "max" else min
            best = pick(drawn, key=lambda r: r["score"])
            best["best"] = True
    return out, info


def as_value(v):
    """A parameter value as a number where it is one; else its text (a category)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        x = number(v)
        if x is not None and not math.isnan(x):
            return x
        return v
    return json.dumps(v)


def draw_search(plt, data, title, mode):
    rows, info = search_table(data, mode)
    scored = [r for r in rows if not math.isnan(r["score"])]
    if not scored:
        raise PlotError("no numeric scores to draw (every score is missing)")
    names = []
    for r in rows:
        for n in r["params"]:
            if n not in names:
                names.append(n)
    by_trial = info["kind"].startswith("tune")
    fig, axes = grid_of(plt, len(names) + (1 if by_trial else 0), width=5.0)
    groups = sorted({r["group"] for r in scored if r["group"] is not None}, key=float)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, name in zip(axes, names):
        pts = [(as_value(r["params"][name]), r) for r in scored if name in r["params"]]
        numeric = all(isinstance(v, float) for v, _ in pts)
        if numeric:
            xs = [v for v, _ in pts]
            if wide_positive(xs):
                ax.set_xscale("log")
        else:
            # Categories in order of first appearance, each at an integer position.
            cats = []
            for v, _ in pts:
                if str(v) not in cats:
                    cats.append(str(v))
            xs = [float(cats.index(str(v))) for v, _ in pts]
            ax.set_xticks(range(len(cats)))
            ax.set_xticklabels(cats)
        for g_index, g in enumerate(groups or [None]):
            sel = [(x, r) for x, (_, r) in zip(xs, pts) if r["group"] == g]
            if not sel:
                continue
            colour = colours[g_index % len(colours)]
            label = None if g is None else f"iteration {g}"
            for status, marker in (("ok", "o"), ("stopped", "v")):
                part = [(x, r) for x, r in sel if r["status"] == status]
                if not part:
                    continue
                if status == "stopped":
                    label = "stopped" if g is None else f"stopped, iteration {g}"
                ax.errorbar([x for x, _ in part], [r["score"] for _, r in part],
                            yerr=[0 if math.isnan(r["std"]) else r["std"] for _, r in part],
                            fmt=marker, color=colour, capsize=2, markersize=4, label=label)
                label = None
        for x, r in zip(xs, [r for _, r in pts]):
            if r["best"]:
                ax.plot([x], [r["score"]], marker="*", color="black", markersize=12,
                        linestyle="none", label="best")
        ax.set_xlabel(name)
        ax.set_ylabel("mean test score" if info["kind"].startswith("cv") else "score")
        ax.grid(alpha=0.3)
        handles, labels = ax.get_legend_handles_labels()
        if labels:
            ax.legend(fontsize="small")
    if by_trial:
        ax = axes[-1]
        ordered = sorted(scored, key=lambda r: r["id"])
        ax.plot([r["id"] for r in ordered], [r["score"] for r in ordered], "o", markersize=4,
                label="trial")
        best, running = [], None
        pick = max if info["mode"] == "max" else min
        completed = [r for r in ordered if r["status"] == "ok"]
        for r in completed:
            running = r["score"] if running is None else pick(running, r["score"])
            best.append(running)
        if completed:
            ax.step([r["id"] for r in completed], best, where="post", label="best so far")
        ax.set_xlabel("trial")
        ax.set_ylabel("score")
        ax.legend(fontsize="small")
        ax.grid(alpha=0.3)
    heading = title or ("search results" if not by_trial else "tune::run results")
    if info["failed"]:
        heading += f" ({info['failed']} failed trial{'s' if info['failed'] > 1 else ''} not drawn)"
    fig.suptitle(heading)
    return fig


def draw_bench(plt, rows, title):
    policies = []
    for r in rows:
        for k in r:
            if k.startswith("speedup_") and k[len("speedup_"):] not in policies:
                policies.append(k[len("speedup_"):])
    workloads = [r.get("workload", f"row {i}") for i, r in enumerate(rows)]
    values = {p: [r.get("speedup_" + p) for r in rows] for p in policies}
    if not any(isinstance(v, (int, float)) for vs in values.values() for v in vs):
        raise PlotError("no numeric ratios to draw (every speedup is null: not implemented?)")
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(workloads) + 2), 4.0))
    width = 0.8 / len(policies)
    for j, p in enumerate(policies):
        xs = [i + (j - (len(policies) - 1) / 2) * width for i in range(len(workloads))]
        # Bars grow from the anchor's line at 1, up when faster and down when slower.
        heights = [v - 1 if isinstance(v, (int, float)) else 0 for v in values[p]]
        ax.bar(xs, heights, bottom=1.0, width=width, label=f"onelearn, {p}")
        for x, v in zip(xs, values[p]):
            if isinstance(v, (int, float)):
                ax.annotate(f"{v:g}", (x, v), ha="center", va="bottom" if v >= 1 else "top",
                            fontsize="x-small")
            else:
                ax.annotate("n/a", (x, 1), ha="center", va="bottom", fontsize="x-small")
    ax.axhline(1.0, color="black", linewidth=1, linestyle="--", label="anchor (scikit-learn)")
    ax.set_yscale("log")
    plain = matplotlib_ticker().FuncFormatter(lambda y, _: f"{y:g}")
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(plain)
    ax.set_xticks(range(len(workloads)))
    ax.set_xticklabels(workloads)
    ax.set_ylabel("anchor seconds / onelearn seconds")
    ax.legend(fontsize="small")
    ax.grid(axis="y", alpha=0.3, which="both")
    ax.set_title(title or "onelearn against its anchors (above 1: onelearn is faster)")
    return fig


def matplotlib_ticker():
    import matplotlib.ticker
    return matplotlib.ticker


# ---- output ---------------------------------------------------------------------------------

def machine_note():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{datetime.date.today().isoformat()}, {cpu}, {os.cpu_count()} cores"


def save(fig, out):
    folder = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(folder):
        raise PlotError(f"cannot write '{out}': folder '{folder}' does not exist")
    fd, tmp = tempfile.mkstemp(prefix=".plot-", suffix=".png", dir=folder)
    os.close(fd)
    try:
        fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
        # mkstemp makes the file private (0600); a picture gets the mode of any new file.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, out)
    except OSError as e:
        raise PlotError(f"cannot write '{out}': {e.strerror}")
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def import_pyplot():
    try:
        import matplotlib
    except ImportError:
        # Debian's python3-matplotlib installs for /usr/bin/python3, which need not be the
        # python3 first on PATH (pyenv, a virtual environment): try it once before giving up.
        system = "/usr/bin/python3"
        if (os.path.realpath(sys.executable) != os.path.realpath(system)
                and os.path.exists(system) and not os.environ.get("ONELEARN_PLOT_REEXEC")):
            os.environ["ONELEARN_PLOT_REEXEC"] = "1"
            os.execv(system, [system, os.path.abspath(__file__), *sys.argv[1:]])
        raise PlotError("matplotlib is not installed (Debian: apt-get install "
                        "python3-matplotlib)")
    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt
    return plt


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="plot.py", description="Draws onelearn's training logs, search results and "
        "benchmark ratios as PNG pictures (see the top of this file).")
    parser.add_argument("file", help="CSVLogger/History file, search results, or "
                        "bench/compare.py output")
    parser.add_argument("-o", "--output", help="the PNG to write (default: FILE with .png)")
    parser.add_argument("--kind", choices=["curves", "search", "bench"],
                        help="what FILE holds, when its content does not say")
    parser.add_argument("--title", help="the picture's title")
    parser.add_argument("--mode", choices=["max", "min"], default="max",
                        help="whether a larger score is better, for a tune::run CSV "
                        "(its JSON says it)")
    parser.add_argument("--note", help="a line under the picture; 'auto': date and machine")
    args = parser.parse_args(argv)
    try:
        text = read_text(args.file)
        out = args.output or os.path.splitext(args.file)[0] + ".png"
        if os.path.abspath(out) == os.path.abspath(args.file):
            raise PlotError(f"expected an output other than the input '{args.file}'")
        if args.kind == "curves" and parse_json(text) is None:
            table = parse_csv(text)
            if table is None:
                raise PlotError(f"unknown format of '{args.file}': expected a CSV table")
            kind, data = "curves", ("table", *table)
        else:
            kind, data = detect(text, args.file)
            if args.kind and args.kind != kind:
                raise PlotError(f"expected {args.kind} data, found {kind} data in '{args.file}'")
        plt = import_pyplot()
        if kind == "curves":
            fig = draw_curves(plt, data, args.title)
        elif kind == "search":
            fig = draw_search(plt, data, args.title, args.mode)
        else:
            fig = draw_bench(plt, data, args.title)
        if args.note:
            note = machine_note() if args.note == "auto" else args.note
            fig.text(0.5, -0.02, note, ha="center", va="top", fontsize="small", color="0.3")
        fig.tight_layout()
        save(fig, out)
    except PlotError as e:
        print(f"plot.py: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
