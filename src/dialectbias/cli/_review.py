"""`dialectbias review export | import | sample | calibration | add-annotator | serve`: the human-review CSV
round trip (SPEC §4 P3; the judgments and the translation queues), stratified samples of a queue (SPEC §4 P1,
P2) and the review app (SPEC §6)."""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from dialectbias.cli import _app
from dialectbias.cli._app import ExperimentArg, clear_errors

if TYPE_CHECKING:
    from dialectbias.config import Experiment
    from dialectbias.judges import Rubric
    from dialectbias.review import ReviewConfig, ReviewQueue
    from dialectbias.review.app._security import WebSettings
    from dialectbias.store import Store
    from dialectbias.tasks import Task

JudgeOption = Annotated[str | None, typer.Option("--judge", help="judge id (default: the primary judge)")]
ExcelOption = Annotated[bool, typer.Option(
    "--excel", help="write UTF-8 with a byte-order mark so Excel shows Bengali text correctly")]


def _queue(exp: Experiment, task: Task, store: Store, judge: str | None) -> ReviewQueue:
    """The judge's review queue (default: the primary judge's) over what it judged (`models:`, or what the
    task names), shown and exported with the task's judgment panels."""
    from dialectbias.errors import ConfigError
    from dialectbias.review import ReviewQueue, routed_to_review

    if judge is None:
        primary = exp.primary_judge
        if primary is None:
            raise ConfigError(f"{exp.path}: the experiment has no judge, so there is nothing to review")
        judge = primary.id
    elif judge not in {j.id for j in exp.judges}:
        raise ConfigError(f"{exp.path}: no judge with id {judge!r}; judges: "
                          f"{', '.join(j.id for j in exp.judges) or 'none'}")
    config = _review_config(exp, task, store, judge)
    return ReviewQueue(store, judge, config.model_ids, confidence_threshold=exp.review.confidence_threshold,
                       rubrics=config.rubrics, routed=routed_to_review(store, exp),
                       judgment_panels=config.judgment_panels)


def _rubrics(task: Task) -> dict[str, Rubric]:
    """Each judge's rubric, as the experiment's task reads it (its `rubric:`, else the task's default)."""
    return dict(task.rubrics)


def _review_config(exp: Experiment, task: Task, store: Store, judge: str | None = None) -> ReviewConfig:
    """The review app's view of the experiment; a task with its own post-processed translations (`ReviewsTranslations`:
    translate, translation_quality) supplies the translation queues' texts, and one whose judges judge something
    else than `models:` (translation_quality) names it (`Task.review_model_ids`) and how to show it
    (`ShowsJudgments`)."""
    from dialectbias.review import review_config
    from dialectbias.tasks import ReviewsTranslations, ShowsJudgments

    return review_config(exp, _rubrics(task), store, judge,
                         translations=task.review_translations if isinstance(task, ReviewsTranslations) else None,
                         judged=task.review_model_ids(),
                         judgment_panels=task.judgment_panels if isinstance(task, ShowsJudgments) else None)


def _write_readme(queue: ReviewQueue, out: Path) -> Path:
    """`<out stem>.README.txt` next to the CSV: each human column's range and anchors."""
    from dialectbias.review import review_readme

    readme = out.with_name(f"{out.stem}.README.txt")
    readme.write_text(review_readme(queue.rubric, out.name), encoding="utf-8")
    return readme


QueueOption = Annotated[str, typer.Option(
    "--queue", help="judgments (the judge's review queue), translation_score, validation, translation_correction "
                    "or error_coding")]


@clear_errors
def export_queue(experiment: ExperimentArg,
                 out: Annotated[Path, typer.Option("--out", help="CSV file to write")],
                 judge: JudgeOption = None, excel: ExcelOption = False, queue: QueueOption = "judgments",
                 all_targets: Annotated[bool, typer.Option(
                     "--all", help="queues other than judgments: every (sampled) target, also those annotated "
                                   "already")] = False) -> None:
    """Write a review queue as CSV, to fill in a spreadsheet and `review import`.

    judgments (default): one row per judgment of the judge with confidence ≤ review.confidence_threshold,
    flagged, clipped by a ceiling, or unparsed, and no human score yet. Fill the human_<field> columns, one
    per numeric field of the judge's rubric (RLAIF: five Likert 0–5; ranges and anchors in <out>.README.txt,
    written next to the CSV), human_script_valid yes/no (optional, rubrics with a script check) and comment
    (optional).

    translation_score, validation, translation_correction, error_coding: one row per target of the queue
    (its sample only, when it has one: `review sample`) that nobody has annotated yet (--all: every one),
    columns queue, target_id, item_id, dialect, domain, source, translation, reference, the human columns of
    the queue's form (human_score 0–10, human_label 0/1/2, human_text the corrected translation,
    human_categories) and comment. The annotations are the review app's own.

    Plain UTF-8; --excel adds a BOM.

    Example: dialectbias review export bn-qa.yaml --out queue.csv
    Example: dialectbias review export bn-translate.yaml --queue translation_score --out scores.csv
    """
    from dialectbias.api import open_experiment
    from dialectbias.review import write_review_csv
    from dialectbias.store import Store

    if queue != "judgments":
        _export_kind_queue(experiment, queue, out, excel, all_targets)
        return
    from dialectbias.review import sampled_ids

    exp, task = open_experiment(experiment)
    with Store.open(exp.store_path, create=False) as store:
        rq = _queue(exp, task, store, judge)
        sampled = sampled_ids(store, "judgments")
        rows = [r for r in rq.pending() if sampled is None or r["judgment_id"] in sampled]
        n = write_review_csv(rows, out, excel=excel, columns=rq.columns_for(rows))
    readme = _write_readme(rq, out)
    _app.console.print(f"{n} {'sampled ' if sampled is not None else ''}judgment(s) to review (judge {rq.judge_id}, "
                       f"rubric {rq.rubric.name}, confidence ≤ {rq.confidence_threshold} or flagged"
                       f"{'; routed: ' + ', '.join(rq.routed_variants) if rq.routed_variants else ''}) → {out} "
                       f"(columns: {readme.name})", highlight=False)


def _export_kind_queue(experiment: Path, queue: str, out: Path, excel: bool, all_targets: bool) -> None:
    from dialectbias.api import open_experiment
    from dialectbias.errors import ConfigError, DataError
    from dialectbias.review import csv_kind, write_queue_csv
    from dialectbias.store import Store

    try:
        kind = csv_kind(queue)
    except DataError as exc:
        raise ConfigError(f"--queue: {exc}") from None
    exp, task = open_experiment(experiment)
    with Store.open(exp.store_path, create=False) as store:
        written = write_queue_csv(kind, _review_config(exp, task, store), store, out, excel=excel,
                                  include_done=all_targets)
    which = "sampled target(s)" if written.sampled else "target(s)"
    left = f"; {written.annotated} annotated already (left out; --all includes them)" if written.annotated else ""
    _app.console.print(f"{written.rows} {which} of queue {queue} → {out} (columns: {out.stem}.README.txt){left}",
                       highlight=False)


@clear_errors
def import_queue(experiment: ExperimentArg,
                 csv_file: Annotated[Path, typer.Argument(help="the filled-in queue CSV",
                                                          show_default=False)],
                 annotator: Annotated[str, typer.Option("--annotator", help="who scored the rows")]) -> None:
    """Store the human annotations of a filled-in queue CSV (`review export`).

    A judgments CSV: every row is checked first (judgment id; every human_<field> column of its judge's
    rubric filled, within the field's range); the score is recomputed through the rubric and replaces the
    judge's in the report. A translation-queue CSV (it has a `queue` column): every row is checked by the
    queue's form (the review app's own validation) and stored as the annotator's annotation, the same
    record the app writes. On any problem nothing is stored (each one named by line and column). Rows with
    empty human columns are skipped; re-importing a file changes nothing.

    Example: dialectbias review import bn-qa.yaml queue.csv --annotator rahim
    """
    from dialectbias.api import open_experiment
    from dialectbias.review import import_queue_csv, is_queue_csv
    from dialectbias.store import Store

    exp, task = open_experiment(experiment)
    with Store.open(exp.store_path, create=False) as store:
        if is_queue_csv(csv_file):
            summary = import_queue_csv(store, _review_config(exp, task, store), csv_file, annotator)
        else:
            summary = _queue(exp, task, store, None).import_csv(csv_file, annotator)
    _app.console.print(f"{csv_file}: {summary.imported} imported, {summary.skipped_empty} skipped (empty), "
                       f"{summary.unchanged} unchanged (already stored)", highlight=False)


@clear_errors
def sample(experiment: ExperimentArg,
           queue: Annotated[str, typer.Option(
               "--queue", help="translation_score, validation, translation_correction, error_coding, "
                               "judge_consistency or judgments")],
           per: Annotated[int | None, typer.Option(
               "--per", help="targets per stratum (default: translation_score 25, validation 10, "
                             "judge_consistency 100; other queues: required)")] = None,
           by: Annotated[str | None, typer.Option(
               "--by", help="stratum keys, comma-separated: dialect, domain (default: translation_score dialect; "
                            "validation domain,dialect; others dialect)")] = None,
           seed: Annotated[int | None, typer.Option(help="sampling seed (default: the experiment's)")] = None,
           clear: Annotated[bool, typer.Option("--clear", help="remove the queue's sample (list every target "
                                                               "again)")] = False) -> None:
    """Draw a stratified random sample of a queue: from then on the queue lists only the sampled targets
    (the app, the API, assignments, the CSV export).

    Per stratum (e.g. dialect, or domain × dialect), N targets drawn with a generator seeded by the seed,
    the queue and the stratum (reproducible; a stratum's sample does not depend on the others); a stratum
    with fewer targets gives all of them (said per stratum: sampled/available). Running it again replaces
    the sample; --clear removes it.

    Example: dialectbias review sample bn-translate.yaml --queue translation_score
    Example: dialectbias review sample bn-translate.yaml --queue validation --per 10 --by domain,dialect
    """
    from dialectbias.api import open_experiment
    from dialectbias.errors import ConfigError
    from dialectbias.review import clear_sample, describe_sample, queue_kinds, sample_queue
    from dialectbias.store import Store

    if queue not in queue_kinds():
        raise ConfigError(f"--queue: unknown queue {queue!r}; queues: {', '.join(queue_kinds())}")
    exp, task = open_experiment(experiment)
    with Store.open(exp.store_path, create=False) as store:
        if clear:
            removed = clear_sample(store, queue)
            _app.console.print(f"queue {queue}: sample removed ({len(removed.ids)} target(s)); every target is "
                               "listed again" if removed else f"queue {queue} had no sample", highlight=False)
            return
        config = _review_config(exp, task, store)
        drawn, previous = sample_queue(store, config, queue_kinds()[queue], per=per,
                                       by=by.split(",") if by else None, seed=exp.seed if seed is None else seed)
    _app.console.print(f"queue {queue}: {len(drawn.ids)} target(s) sampled, {drawn.per} per "
                       f"{' × '.join(drawn.by)} (seed {drawn.seed})"
                       + (f"; replaces the previous sample ({len(previous.ids)} target(s))" if previous else ""),
                       highlight=False)
    for line in describe_sample(drawn):
        _app.console.print(f"  {line}", highlight=False)
    if drawn.short:
        _app.console.print(f"{len(drawn.short)} stratum/strata had fewer than {drawn.per} targets: all of them "
                           "were taken", highlight=False)


@clear_errors
def calibration(experiment: ExperimentArg,
                out: Annotated[Path | None, typer.Option(
                    "--out", help="write a calibration SAMPLE to this CSV instead (N judgments per confidence "
                                  "level, to score by hand)")] = None,
                per_level: Annotated[int | None, typer.Option(
                    "--per-level", min=1, help="with --out: judgments per confidence level 1–5 "
                                               "(default: review.calibration_per_level)")] = None,
                seed: Annotated[int | None, typer.Option(
                    help="with --out: sampling seed (default: the experiment's)")] = None,
                judge: JudgeOption = None, excel: ExcelOption = False,
                table: Annotated[Path | None, typer.Option(
                    "--csv", help="also write the calibration and agreement tables to this CSV")] = None) -> None:
    """Every judge against the human scores per dialect (CCC, CBS, kappa), agreement between annotators, and
    each annotator's progress.

    Human scores are the reviewed judgments (review app or CSV import); when several annotators scored a
    judgment, review.human_score says which counts: mean (default) or latest. Each call stores a snapshot,
    so calibration is tracked over time; a judge below review.min_ccc, min_cbs or min_kappa for a dialect
    is a warning (and, with review.on_miscalibrated, the dialect is routed to review or to another judge,
    if that judge is calibrated there itself; else to review). With --out, writes a calibration sample instead: N random
    judgments per confidence level 1–5 as review CSV, to check the confidence threshold.

    Example: dialectbias review calibration bn-qa.yaml
    Example: dialectbias review calibration bn-qa.yaml --out calibration.csv --per-level 100 --seed 1
    """
    from dialectbias.api import open_experiment

    if out is None:
        _calibration_report(experiment, table)
        return
    from dialectbias.review import write_review_csv
    from dialectbias.store import Store

    exp, task = open_experiment(experiment)
    n = per_level if per_level is not None else exp.review.calibration_per_level
    with Store.open(exp.store_path, create=False) as store:
        queue = _queue(exp, task, store, judge)
        sample = queue.calibration_sample(n, exp.seed if seed is None else seed)
    write_review_csv(sample.rows, out, excel=excel, columns=queue.columns_for(sample.rows))
    _write_readme(queue, out)
    levels = ", ".join(f"{lvl}: {k}/{sample.available[lvl]}" for lvl, k in sample.per_level.items())
    _app.console.print(f"{len(sample.rows)} judgment(s) sampled (per confidence level, sampled/available: "
                       f"{levels}) → {out}", highlight=False)


def _calibration_report(experiment: Path, table: Path | None) -> None:
    import csv

    from rich.table import Table

    from dialectbias.api import open_experiment
    from dialectbias.review import (
        annotator_agreement,
        annotators,
        calibration_alert,
        judge_calibration,
        primary_routes,
        save_snapshot,
        tasks_of,
        thresholds_of,
    )
    from dialectbias.store import Store, human_score_label

    exp, task = open_experiment(experiment)
    thresholds = thresholds_of(exp)
    with Store.open(exp.store_path, create=False) as store:
        config = _review_config(exp, task, store)
        mode = exp.review.human_score
        rows = judge_calibration(store, [j.id for j in exp.judges], [m.id for m in exp.models], _rubrics(task),
                                 thresholds, human=mode)
        agreement = annotator_agreement(store, config)
        progress = [(a, queue, sum(t.done for t in tasks), len(tasks)) for a in annotators(store)
                    for queue in a.queues if (tasks := tasks_of(store, a, queue))]
        if rows:
            save_snapshot(store, rows, thresholds)
        routes = primary_routes(store, exp)
    if progress:
        t = Table(title="annotators: review tasks done")
        for col in ("annotator", "dialects", "queue", "done", "assigned"):
            t.add_column(col)
        for a, queue, done, total in progress:
            t.add_row(a.name, ", ".join(a.dialects), queue, str(done), str(total))
        _app.console.print(t)
    if not rows:
        _app.console.print("no human scores yet: review judgments in the app (`dialectbias review serve`) or "
                           "import a filled CSV (`dialectbias review import`)", highlight=False)
    else:
        t = Table(title=f"judges vs human scores (CCC ≥ {thresholds.min_ccc:g}, CBS ≥ {thresholds.min_cbs:g}, "
                        f"kappa ≥ {thresholds.min_kappa:g}; over ≥ {thresholds.min_pairs} judgments; "
                        f"{human_score_label(mode)}; multi = judgments scored by two or more annotators)")
        for col in ("judge", "rubric", "dialect", "n", "multi", "ccc", "cbs", "kappa", "below"):
            t.add_column(col)
        for r in rows:
            t.add_row(r.judge, r.rubric, r.dialect, str(r.n), str(r.multi),
                      *(_cell(v) for v in (r.ccc, r.cbs, r.kappa)), ", ".join(r.below) or r.note)
        _app.console.print(t)
    if agreement:
        t = Table(title="agreement between annotators (quadratic-weighted kappa per pair; Krippendorff's alpha)")
        for col in ("queue", "value", "dialect", "pair", "n", "kappa", "alpha", "note"):
            t.add_column(col)
        for agreed in agreement:
            t.add_row(agreed["queue"], agreed["value"], agreed["dialect"], agreed["pair"], str(agreed["n"]),
                      _cell(agreed["kappa"]), _cell(agreed["alpha"]), agreed["note"])
        _app.console.print(t)
    primary = exp.primary_judge.id if exp.primary_judge else None
    for r in rows:
        if r.below and r.dialect != "all":
            _app.err_console.print(f"warning: {calibration_alert(r, primary, exp.review.on_miscalibrated, routes)}",
                                   highlight=False)
    if table is not None:
        table.parent.mkdir(parents=True, exist_ok=True)
        with table.open("w", encoding="utf-8", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["table", "judge_or_queue", "rubric_or_value", "dialect", "pair", "n", "multi",
                             "human_score", "ccc", "cbs", "kappa", "alpha", "below_or_note"])
            for r in rows:
                writer.writerow(["judge_calibration", r.judge, r.rubric, r.dialect, "", r.n, r.multi, mode, r.ccc,
                                 r.cbs, r.kappa, "", "; ".join(r.below) or r.note])
            for agreed in agreement:
                writer.writerow(["annotator_agreement", agreed["queue"], agreed["value"], agreed["dialect"],
                                 agreed["pair"], agreed["n"], "", "", "", "", agreed["kappa"], agreed["alpha"],
                                 agreed["note"]])
        _app.console.print(f"tables → {table}", highlight=False)


def _cell(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


@clear_errors
def add_annotator(experiment: ExperimentArg,
                  name: Annotated[str, typer.Argument(help="the annotator's name (letters, digits, _ . -)",
                                                      show_default=False)],
                  dialects: Annotated[str, typer.Option("--dialects", help="comma-separated dialects they review")],
                  queues: Annotated[str | None, typer.Option(
                      "--queues", help="comma-separated queues (default: all but judge_consistency): judgments, "
                                       "translation_score, translation_correction, validation, error_coding, "
                                       "judge_consistency")] = None,
                  rotate: Annotated[bool, typer.Option(
                      "--rotate", help="the annotator exists: issue a new token (the old one stops working) and "
                                       "set these dialects and queues")] = False) -> None:
    """Create an annotator and print their personal token (alone, on the last line; only its hash is stored).

    The annotator sees only the given queues and dialects; review tasks are assigned to them at once (each
    item to review.overlap annotators). Give them the token and the app's address (`review serve`).

    Example: dialectbias review add-annotator bn-qa.yaml rahim --dialects sylhet,chittagong --queues judgments
    """
    from dialectbias.api import open_experiment
    from dialectbias.data import known_variants, unknown_variant_message
    from dialectbias.errors import ConfigError
    from dialectbias.review import add_annotator as add
    from dialectbias.review import assign
    from dialectbias.store import Store, assignment_count

    exp, task = open_experiment(experiment)
    names = [d.strip() for d in dialects.split(",") if d.strip()]
    known = known_variants(exp.dialects)
    for d in names:
        if d.lower() not in known:
            raise ConfigError(f"--dialects: {unknown_variant_message(d, known)}")
    queue_names = [q.strip() for q in queues.split(",") if q.strip()] if queues else None
    with Store.open(exp.store_path) as store:
        token = add(store, name, names, queue_names, rotate=rotate)
        summary = assign(store, _review_config(exp, task, store))
        tasks = assignment_count(store, name.strip())
    _app.console.print(f"annotator {name.strip()}: dialects {', '.join(names)}; queues "
                       f"{', '.join(queue_names) if queue_names else 'all'}; {tasks} task(s) assigned"
                       + (f" ({summary.unassigned} item(s) have no annotator of their dialect yet)"
                          if summary.unassigned else ""), highlight=False)
    _app.console.print("their personal token (shown once; keep it secret):", highlight=False)
    typer.echo(token)


#: the web guard's options, shared by `review serve` and `view` (review/app/_security.py)
AllowedHostOpt = Annotated[list[str] | None, typer.Option(
    "--allowed-host", metavar="NAME",
    help="a host name users reach the app by (repeat it), e.g. the TLS proxy's public name; other Host headers "
         "get 400 (DNS rebinding). Always allowed: the bound address, and localhost when bound to loopback")]
SecureCookiesOpt = Annotated[bool, typer.Option(
    "--secure-cookies", help="every request arrives over TLS (a TLS proxy in front): mark the cookies Secure")]
TrustedProxyOpt = Annotated[list[str] | None, typer.Option(
    "--trusted-proxy", metavar="IP",
    help="the address of a reverse proxy whose X-Forwarded-Proto: https (Secure cookies) and X-Forwarded-For "
         "(the login throttle's client) are believed (repeat it; default: none, the headers are ignored)")]


@clear_errors
def serve(experiment: ExperimentArg,
          host: Annotated[str, typer.Option("--host", help="address to listen on (only this machine by default)")]
          = "127.0.0.1",
          port: Annotated[int, typer.Option("--port", min=0, max=65535, help="port")] = 8765,
          judge: JudgeOption = None,
          allowed_host: AllowedHostOpt = None,
          secure_cookies: SecureCookiesOpt = False,
          trusted_proxy: TrustedProxyOpt = None) -> None:
    """Serve the review app: annotators log in with their token and score, correct and code in a browser.

    Queues: judgments (low confidence, flagged or clipped; any rubric), translation_score (0–10),
    translation_correction, validation (0/1/2) and error_coding (images). Human scores replace the judge's
    in the report, exactly like `review import`. A JSON API (Authorization: Bearer TOKEN) serves scripts:
    GET /api/tasks, GET /api/tasks/{id} and POST /api/tasks/{id}/annotation.

    It listens on 127.0.0.1 unless --host says otherwise. To expose it, put a TLS proxy in front and say so
    (--secure-cookies, or --trusted-proxy IP), naming the public host with --allowed-host. Failed log-ins are
    throttled per address and overall. See docs/review.md, "Security and deployment".

    Example: dialectbias review serve bn-qa.yaml --port 8765
    """
    from dialectbias.api import open_experiment
    from dialectbias.errors import ConfigError
    from dialectbias.store import Store

    try:
        import uvicorn

        from dialectbias.review.app import create_app
    except ImportError as exc:
        raise ConfigError(f"the review app needs the `review` extra: pip install 'dialectbias[review]' "
                          f"({exc.name} is missing)") from None
    exp, task = open_experiment(experiment)
    if judge is not None and judge not in {j.id for j in exp.judges}:
        raise ConfigError(f"{exp.path}: no judge with id {judge!r}")
    with Store.open(exp.store_path, create=False) as store:
        config = _review_config(exp, task, store, judge)
    web = web_settings(host, allowed_host, secure_cookies, trusted_proxy)
    app = create_app(exp.store_path, config, title=f"{exp.name} · review", web=web)
    if host not in ("127.0.0.1", "localhost", "::1"):
        _app.err_console.print(f"warning: listening on {host}: other machines can reach the app; the traffic "
                               "(tokens included) is not encrypted unless a TLS proxy is in front", highlight=False)
        if not allowed_host:
            _app.err_console.print("note: only requests naming the bound address in their Host header are "
                                   "answered; add the names annotators use with --allowed-host NAME",
                                   highlight=False)
    sock = _listen(host, port)  # before anything is printed: a busy port is one error line
    port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    _app.console.print(f"review app: http://{shown}:{port}/  (Ctrl+C stops it)", highlight=False)
    with sock, contextlib.suppress(KeyboardInterrupt):  # Ctrl+C or SIGTERM: uvicorn shut the app down
        # proxy_headers off: uvicorn would believe any local peer's X-Forwarded-* (the app reads them itself,
        # from --trusted-proxy only)
        uvicorn.Server(uvicorn.Config(app, log_level="info", server_header=False, proxy_headers=False)
                       ).run(sockets=[sock])
    _app.console.print("review app stopped", highlight=False)


def web_settings(host: str, allowed_host: list[str] | None, secure_cookies: bool,
                 trusted_proxy: list[str] | None) -> WebSettings:
    """The web guard's settings from the serving commands' options (`review serve`, `view`), checked."""
    from dialectbias.errors import ConfigError
    from dialectbias.review.app._security import WebSettings, split_host

    for name in allowed_host or []:
        parsed = split_host(name)
        if parsed is None or parsed[1] is not None or not parsed[0]:
            raise ConfigError(f"--allowed-host {name!r}: give a host name or address without a port, e.g. "
                              "review.example.org")
    for proxy in trusted_proxy or []:
        try:
            ipaddress.ip_address(proxy)
        except ValueError:
            raise ConfigError(f"--trusted-proxy {proxy!r}: give the proxy's IP address as the app sees it, e.g. "
                              "127.0.0.1") from None
    return WebSettings(bind_host=host, allowed_hosts=tuple(allowed_host or ()), secure_cookies=secure_cookies,
                       trusted_proxies=tuple(trusted_proxy or ()))


def _listen(host: str, port: int) -> socket.socket:
    """A socket bound to (host, port) for the app; ConfigError when the port is taken or the host unknown."""
    from dialectbias.errors import ConfigError

    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    except socket.gaierror as exc:
        raise ConfigError(f"--host {host}: not an address of this machine ({exc.strerror})") from None
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ConfigError(f"port {port} on {host} is in use (another review app?): choose another with "
                              f"--port, e.g. --port {port + 1}") from None
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock
