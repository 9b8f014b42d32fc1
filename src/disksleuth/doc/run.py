"""The run document: what `check` and `bench` print with --json, the store saves, `export` writes and
`import` reads. One builder (`run_document`) serves both commands, so one run has the same keys whichever
command made it; `run_from_dict` reads a stored one back into the model."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from disksleuth.doc.health import health_to_dict
from disksleuth.model.run import Run, TestResult

if TYPE_CHECKING:
    from disksleuth.analysis.baseline import Baseline
    from disksleuth.analysis.verdicts import Figures
    from disksleuth.model import Device, Finding, LinkChain


def test_to_dict(t: TestResult) -> dict[str, Any]:
    out = dataclasses.asdict(t)
    out["series"] = [dataclasses.asdict(p) for p in t.series]
    out["pct_of_reference"] = dict(t.pct_of_reference) if t.pct_of_reference is not None else None
    out["notes"] = list(t.notes)
    if t.sustained is not None:
        from disksleuth.doc.sustained import sustained_to_dict

        out["sustained"] = sustained_to_dict(t.sustained)
    else:
        out.pop("sustained", None)
    return out


def run_to_dict(run: Run) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "run": {
            "id": run.id,
            "kind": run.kind,
            "target": run.target,
            "profile": run.profile,
            "started_at": run.started_at,
            "finished_at": run.finished_at,
            "fio_version": run.fio_version,
            "engine": run.engine,
            "host": dict(run.host),
            "device": run.device,
            "size_bytes": run.size_bytes,
            "notes": list(run.notes),
        },
        "tests": [test_to_dict(t) for t in run.tests],
        "reference": [test_to_dict(t) for t in run.reference],
        "health": {
            "before": health_to_dict(run.health_before) if run.health_before else None,
            "after": health_to_dict(run.health_after) if run.health_after else None,
            "changes": {k: list(v) for k, v in run.health_changes.items()},
            "temperature_source": run.temperature_source,
            "temperature_series": [{"t_s": t, "temperature_c": c} for t, c in run.temperature_series],
        },
    }
    return with_sustained(doc)


def with_sustained(doc: dict[str, Any]) -> dict[str, Any]:
    """The sustained profile's fill also as a top-level `sustained` object (issue 14), in bench --json and in
    a stored run read back (show --json, export, report)."""
    fill = next((t for t in doc.get("tests") or [] if t.get("sustained")), None)
    if fill is not None:
        doc["sustained"] = fill["sustained"]
    return doc


def run_from_dict(doc: dict[str, Any]) -> Run:
    """A stored run document back into the model, for the terminal views."""
    from disksleuth.model.run import SeriesPoint

    test_fields = {f.name for f in dataclasses.fields(TestResult)}

    required = [
        f.name
        for f in dataclasses.fields(TestResult)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]

    def test(t: dict[str, Any]) -> TestResult:
        kw: dict[str, Any] = {name: None for name in required}
        kw.update({k: v for k, v in t.items() if k in test_fields})
        kw["series"] = tuple(SeriesPoint(**p) for p in t.get("series") or [])
        kw["notes"] = tuple(t.get("notes") or ())
        kw["repeat_values"] = tuple(t.get("repeat_values") or ())
        kw["cache_affected"] = bool(kw.get("cache_affected"))
        if isinstance(t.get("foreign_io"), dict):  # issue 36; older runs have none
            from disksleuth.analysis.foreign import foreign_from_dict

            kw["foreign_io"] = foreign_from_dict(t["foreign_io"])
        else:
            kw["foreign_io"] = None
        if t.get("sustained"):
            from disksleuth.doc.sustained import sustained_from_dict

            kw["sustained"] = sustained_from_dict(t["sustained"])
        return TestResult(**kw)

    run = doc["run"]
    return Run(
        id=run.get("id"),
        kind=run.get("kind", "bench"),
        target=run["target"],
        profile=run["profile"],
        started_at=run["started_at"],
        finished_at=run.get("finished_at"),
        fio_version=run.get("fio_version"),
        engine=run.get("engine") or "",
        host=run.get("host") or {},
        device=run.get("device"),
        size_bytes=run.get("size_bytes"),
        notes=tuple(run.get("notes") or ()),
        tests=tuple(test(t) for t in doc.get("tests") or []),
        reference=tuple(test(t) for t in doc.get("reference") or []),
    )


def figures_to_tests(f: Figures) -> list[dict[str, Any]]:
    """`explain`: the figures given on the command line, shaped like tests."""
    out = []
    if f.seq_read_mbps is not None or f.seq_write_mbps is not None:
        out.append(
            {
                "id": "given_sequential",
                "source": "given",
                "read_mbps": f.seq_read_mbps,
                "write_mbps": f.seq_write_mbps,
                "read_iops": None,
                "write_iops": None,
            }
        )
    if f.rand_read_iops is not None or f.rand_write_iops is not None:
        out.append(
            {
                "id": "given_random_4k",
                "source": "given",
                "bs_bytes": 4096,
                "read_mbps": None,
                "write_mbps": None,
                "read_iops": f.rand_read_iops,
                "write_iops": f.rand_write_iops,
            }
        )
    return out


def run_document(
    run: Run,
    device: Device,
    chain: LinkChain,
    findings: list[Finding],
    summary: str,
    *,
    health_not_read: str | None = None,
    skipped: tuple[str, ...] = (),
    baseline: Baseline | None = None,
) -> dict[str, Any]:
    """The document of one measured run, whichever command made it (`check` or `bench`): the same keys."""
    from disksleuth.doc.inventory import device_to_dict

    base = run_to_dict(run)
    doc: dict[str, Any] = {
        "device": device_to_dict(device, chain),
        "run": base["run"],
        "tests": base["tests"],
        "reference": base["reference"],
        # Why no drive health was read (a virtual disk has no SMART data), or null.
        "health": {**base["health"], "not_read_reason": health_not_read},
        "findings": [f.to_dict() for f in findings],
        "summary": summary,
        "skipped": list(skipped),
    }
    if "sustained" in base:  # the sustained profile's fill, also at the top (issue 14)
        doc["sustained"] = base["sustained"]
    if baseline is not None:  # the run against its drive's earlier runs (issue 23)
        from disksleuth.doc.baseline import baseline_to_dict

        doc["baseline"] = baseline_to_dict(baseline)
    return doc


def is_memory_backed(doc: dict[str, Any]) -> bool:
    """One rule for every view: the run's verdicts said its target stands on RAM (analysis/verdicts.py
    memory_backed, from the probe's memory record), so its figures measure memory, not storage (unless a cgroup
    I/O limit held them: is_limited)."""
    return any(f.get("code") == "memory_backed" for f in doc.get("findings") or [])


def is_limited(doc: dict[str, Any]) -> bool:
    """The run's verdicts said a cgroup I/O limit held its figures (io_limit, issue 36): they measure the limit."""
    return any(f.get("code") == "io_limit" for f in doc.get("findings") or [])


def limited_tests(doc: dict[str, Any]) -> list[str]:
    """The tests whose figures a cgroup I/O limit held (io_limit's evidence), in order."""
    out: list[str] = []
    for f in doc.get("findings") or []:
        if f.get("code") == "io_limit" and isinstance(f.get("evidence"), dict):
            out += [str(x.get("test")) for x in f["evidence"].get("figures") or [] if isinstance(x, dict)]
    return list(dict.fromkeys(out))
