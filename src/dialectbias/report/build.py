"""Build a task's report from the store: CSV tables plus a self-contained index.html."""

from __future__ import annotations

from pathlib import Path

from dialectbias.config import load_experiment
from dialectbias.report._html import write_html
from dialectbias.store import Store
from dialectbias.tasks import get_task


def build_report(experiment_path: str | Path, out_dir: str | Path) -> Path:
    exp = load_experiment(experiment_path)
    task = get_task(exp.task)(exp)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with Store.open(exp.store_path, create=False) as store:
        result = task.report(store, out)
        calls = store.query("SELECT count(*), sum(status='failed'), sum(tokens_in), sum(tokens_out) "
                            "FROM results WHERE request_id IN (SELECT request_id FROM current_requests)")[0]
    metadata = {"experiment": exp.name, "task": exp.task, "experiment file": str(exp.path),
                "store": str(exp.store_path), "models": ", ".join(m.id for m in exp.models),
                "judges": ", ".join(f"{j.id} ({j.role or 'primary'})" for j in exp.judges) or "none",
                "results stored": calls[0], "failed requests": calls[1] or 0,
                "tokens in/out": f"{calls[2] or 0:,} / {calls[3] or 0:,}", **result.get("metadata", {})}
    return write_html(out / "index.html", result["title"], result["sections"], metadata, note=exp.note)
