"""A run against its drive's earlier runs (analysis/baseline.py judges, store/baseline.py finds them), for
`check`, `bench`, `show`, `runs`, the report and the exporter. A baseline never fails a command: a missing,
locked or broken store is said in the baseline's reason instead."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from disksleuth.analysis.baseline import DEFAULT_CHOICE, MIN_RUNS, Baseline, Choice, History, judge, parse_choice
from disksleuth.errors import DisksleuthError, StoreMissing, UsageError
from disksleuth.model.baseline import EarlierRun, Identity, Method, TestFigures
from disksleuth.store.baseline import CANDIDATES, earlier_runs, other_serial_runs, serial_id_for
from disksleuth.store.db import Store
from disksleuth.store.latest import epoch_s

__all__ = ["Baseline", "Choice", "baseline_for", "baseline_of", "baselines_of_stored", "parse_choice"]


def identity_of(store: Store, doc: dict[str, Any]) -> Identity | None:
    """The drive of a run document (measured now, or stored): None when no block device was behind it."""
    device = doc.get("device") or {}
    run = doc.get("run") or {}
    name = device.get("name") or run.get("device")
    if not name:
        return None
    host = (run.get("host") or {}).get("hostname")
    size = device.get("size_bytes")
    serial_id = serial_id_for(store, device)
    backing = device.get("backing_file")
    return Identity(
        serial_id,
        host,
        str(name),
        device.get("model"),
        size if isinstance(size, int) else None,
        # A loop device's name is reused for other files: without a serial, its backing file tells them apart.
        backing_file=backing if isinstance(backing, str) and backing and not serial_id else None,
    )


def method_of(doc: dict[str, Any]) -> Method:
    run = doc.get("run") or {}
    return Method(run.get("profile"), run.get("engine"), run.get("size_bytes"))


def _as_earlier(doc: dict[str, Any]) -> EarlierRun:
    run = doc["run"]
    tests = {str(t["id"]): TestFigures.of(t) for t in doc.get("tests") or []}
    return EarlierRun(int(run["id"]), run.get("started_at"), epoch_s(run.get("started_at")), tests)


def baseline_of(
    store: Store, doc: dict[str, Any], choice: Choice = DEFAULT_CHOICE, *, now_s: float | None = None
) -> Baseline:
    """`doc` (a run document, saved or not) against the chosen earlier runs of its drive in `store`."""
    identity = identity_of(store, doc)
    method = method_of(doc)
    run_id = doc["run"].get("id")
    notes: list[str] = []
    if choice.kind == "run":
        if choice.run_id == run_id:
            raise UsageError(f"--baseline {choice.run_id} is the run itself; give an earlier run, last or median:N")
        assert choice.run_id is not None  # a "run" choice always names one
        try:
            other = store.load(choice.run_id, with_series=False)
        except UsageError as exc:  # a missing run is one usage line that names the option
            raise UsageError(f"--baseline {choice.run_id}: {exc}") from None
        earlier = [_as_earlier(other)]
        if identity is not None and identity_of(store, other) != identity:
            notes.append(f"run #{choice.run_id} is of another drive")
        if method_of(other) != method:
            notes.append(f"run #{choice.run_id} was measured differently (profile, engine or size)")
    elif identity is None or not identity.usable:
        earlier = []
    else:
        # Enough for median:N with room for runs left out (dated in the future, with no start time).
        limit = max(choice.runs, MIN_RUNS) + 20
        earlier = earlier_runs(store, identity, method, before_id=run_id, limit=limit)
        if identity.by_serial and len(earlier) < max(MIN_RUNS, choice.runs):
            others = other_serial_runs(store, identity, method, before_id=run_id)
            if others:
                notes.append(
                    f"{others} earlier run(s) of {identity.device_name} on this host were of a drive with another "
                    "serial number (replaced, or its firmware or USB bridge changed): not compared"
                )
    return judge(
        doc.get("tests") or [],
        earlier,
        choice,
        identity,
        current_started_s=epoch_s(doc["run"].get("started_at")),
        now_s=time.time() if now_s is None else now_s,
        notes=notes,
    )


def baseline_for(
    db: str | None, doc: dict[str, Any], choice: Choice = DEFAULT_CHOICE, *, strict: bool = False
) -> Baseline:
    """As baseline_of, opening the store read-only. A store that is missing or cannot be read gives a
    baseline that says so: a measurement is never lost or failed for its history. `strict` (show): a
    --baseline run that is not stored is a usage error; otherwise (check, bench) it is the reason."""
    try:
        with Store(db, create=False, read_only=True) as store:
            return baseline_of(store, doc, choice)
    except StoreMissing:
        return Baseline(choice, None, status="no_history", reason="no results store yet, so no earlier runs")
    except UsageError as exc:
        if strict:
            raise
        return Baseline(choice, None, status="no_history", reason=str(exc))
    except DisksleuthError as exc:
        return Baseline(choice, None, status="no_history", reason=f"no earlier runs could be read ({exc})")


def baselines_of_stored(
    db: str | None, docs: Sequence[dict[str, Any]], choice: Choice = DEFAULT_CHOICE
) -> list[Baseline]:
    """Each stored run against its own earlier runs, in one opening of the store."""
    with Store(db, create=False, read_only=True) as store:
        return [baseline_of(store, d, choice) for d in docs]


def latest_ratios(
    db: str | None, run_ids: Sequence[int], timeout_s: int | None = None
) -> dict[tuple[int, str, str], float]:
    """For the exporter: each stored run's figures against its drive's default baseline, as
    {(run id, test id, direction): figure / baseline}; a figure without enough history is left out."""
    out: dict[tuple[int, str, str], float] = {}
    with Store(db, create=False, read_only=True, timeout_s=timeout_s) as store:
        for run_id in dict.fromkeys(run_ids):
            b = baseline_of(store, store.load(run_id, with_series=False))
            for j in b.figures:
                out[(run_id, j.test_id, j.metric.split("_", 1)[0])] = j.ratio
    return out


def report_histories(db: str | None, docs: Sequence[dict[str, Any]]) -> list[History]:
    """For the report: per drive and way of measuring among `docs`, the newest of them with its drive's runs
    up to it (at most CANDIDATES) and its baseline. [] when the store cannot be read: a report is never lost
    for its history."""
    out: list[History] = []
    seen: set[tuple[Identity, Method]] = set()
    try:
        with Store(db, create=False, read_only=True) as store:
            for doc in sorted(docs, key=lambda d: int(d["run"]["id"]), reverse=True):
                identity, method = identity_of(store, doc), method_of(doc)
                if identity is None or not identity.usable or (identity, method) in seen:
                    continue
                seen.add((identity, method))
                run_id = int(doc["run"]["id"])
                runs = earlier_runs(store, identity, method, before_id=run_id + 1, limit=CANDIDATES)
                out.append(History(run_id, tuple(runs), baseline_of(store, doc)))
    except DisksleuthError:
        return []
    return out
