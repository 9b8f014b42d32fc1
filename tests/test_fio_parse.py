"""fio JSON parsing against real captures from fio 3.33 (this machine) and fio 3.16."""

from __future__ import annotations

import os

import pytest
from conftest import FIO_FIXTURES

from disksleuth.analysis.results import result_from_fio, series_from_samples
from disksleuth.errors import ParseError
from disksleuth.probe.fio import StatusSample
from disksleuth.probe.fio_parse import aggregate, parse_fio_json, split_documents
from disksleuth.profiles import PROFILES, JobPlan, TestSpec


def _read(name: str) -> str:
    with open(os.path.join(FIO_FIXTURES, name)) as fh:
        return fh.read()


def test_fio_333_randread_with_total_latency_percentiles():
    report = parse_fio_json(_read("fio-3.33-randread-io_uring.json"))
    assert report.version == "fio-3.33"
    job = aggregate(report)
    assert job.read.iops > 1000 and job.read.percentile_source == "lat"
    assert set(job.read.percentiles_ns) >= {50.0, 99.0, 99.9}
    assert job.write.total_ios == 0


def test_fio_316_randrw_has_clat_percentiles_only():
    report = parse_fio_json(_read("fio-3.16-randrw-libaio.json"))
    assert report.version == "fio-3.16"
    job = aggregate(report)
    # Figures straight from the capture.
    assert job.read.bw_bytes == 55654922 and job.write.bw_bytes == 55665844
    assert job.read.iops == pytest.approx(6793.813746)
    assert job.read.percentile_source == "clat"
    assert job.read.percentiles_ns[99.0] == 2408448
    assert job.read.lat_mean_ns == pytest.approx(531391.056185)
    spec = TestSpec("RND8K_Q1T1_randrw", "randrw", 8192, 1, rwmixread=50)
    plan = JobPlan("/x", None, None, "libaio", True, 30, 5)
    result = result_from_fio(
        spec, job, fio_version=report.version, engine="libaio", fio_command="fio ...", plan=plan, cache_affected=False
    )
    assert result.read_mbps == pytest.approx(55.65, abs=0.01) and result.write_mbps == pytest.approx(55.67, abs=0.01)
    assert result.lat_p99_us == pytest.approx(477.18, abs=0.01)  # the busier direction (writes, 203868 ios)
    assert any("clat" in n for n in result.notes)


def test_mixed_key_from_unified_rw_reporting():
    job = aggregate(parse_fio_json(_read("fio-3.33-randrw-unified-mixed.json")))
    assert job.mixed is not None and job.mixed.active
    assert job.read is None and job.write is None
    spec = TestSpec("RND4K_Q16T1_randrw75", "randrw", 4096, 16, rwmixread=75)
    plan = JobPlan("/x", None, None, "libaio", True, 1, 0)
    result = result_from_fio(
        spec, job, fio_version="fio-3.33", engine="libaio", fio_command="", plan=plan, cache_affected=False
    )
    assert result.read_iops == pytest.approx(job.mixed.iops, rel=1e-3)
    assert any("combined" in n for n in result.notes)


def test_per_job_entries_without_group_reporting_are_merged():
    report = parse_fio_json(_read("fio-3.33-two-jobs-no-group-reporting.json"))
    assert len(report.jobs) == 2
    job = aggregate(report)
    assert job.jobs_merged == 2 and job.percentiles_approx
    assert job.read.iops == pytest.approx(report.jobs[0].read.iops + report.jobs[1].read.iops)
    assert job.read.io_bytes == report.jobs[0].read.io_bytes + report.jobs[1].read.io_bytes
    assert job.read.percentiles_ns[99.0] == max(j.read.percentiles_ns[99.0] for j in report.jobs)


def test_note_line_before_json_is_kept_as_a_message():
    report = parse_fio_json(_read("fio-3.33-note-line-before-json.json"))
    assert report.messages and report.messages[0].startswith("note: both iodepth")
    assert aggregate(report).read.iops > 0


def test_error_text_before_json_and_job_error():
    report = parse_fio_json(_read("fio-3.33-error-einval.json"))
    assert report.jobs[0].error == 22
    assert any("first direct IO errored" in m for m in report.messages)


def test_truncated_document_is_a_clear_error():
    with pytest.raises(ParseError, match="truncated"):
        parse_fio_json(_read("fio-3.33-truncated.json"))


@pytest.mark.parametrize("text", ["", "fio: engine libfoo not loadable\n", "{not json", "[1, 2, 3]"])
def test_garbage_is_a_clear_error(text):
    with pytest.raises(ParseError):
        parse_fio_json(text)


def test_status_stream_is_split_into_cumulative_documents():
    docs, stray, rest = split_documents(_read("fio-3.33-status-stream.json"))
    assert len(docs) >= 3 and not rest
    io = [d["jobs"][0]["read"]["io_bytes"] for d in docs]
    assert io == sorted(io)  # cumulative
    report = parse_fio_json(_read("fio-3.33-status-stream.json"))
    assert report.jobs[0].read.io_bytes == io[-1]


def test_status_stream_with_error_lines_between_documents():
    stream = _read("fio-3.33-status-stream.json")
    first_end = stream.index("\n}\n") + 3
    noisy = stream[:first_end] + "fio: io_u error on file /dev/sdz: Input/output error\n" + stream[first_end:]
    docs, stray, rest = split_documents(noisy)
    assert len(docs) == len(split_documents(stream)[0])
    assert stray == ["fio: io_u error on file /dev/sdz: Input/output error"]


def test_partial_document_is_left_as_remainder():
    stream = _read("fio-3.33-status-stream.json")
    cut = stream[: len(stream) - 500]
    docs, _, rest = split_documents(cut)
    assert rest.startswith("{") and len(docs) == len(split_documents(stream)[0]) - 1


def test_series_skips_the_ramp_reset():
    samples = [
        StatusSample(1.0, 100_000_000, 0, 100, 1000),
        StatusSample(2.0, 200_000_000, 0, 200, 2000),
        StatusSample(3.0, 50_000_000, 0, 50, 3000),  # ramp_time ended: fio reset its counters
        StatusSample(4.0, 150_000_000, 0, 150, 4000),
    ]
    series = series_from_samples(samples)
    assert [p.read_mbps for p in series] == [100.0, 100.0]
    assert [p.t_s for p in series] == [2.0, 4.0]


def test_every_profile_builds_valid_commands():
    from disksleuth.profiles import fio_argv

    for profile in PROFILES.values():
        for spec in profile.tests:
            argv = fio_argv(spec, JobPlan("/dev/x", 1 << 30, None, "libaio", True, 5, 1))
            assert argv[0] == "fio" and "--group_reporting" in argv and "--direct=1" in argv
            assert ("--refill_buffers" in argv) == spec.writes
    flash = PROFILES["flash"]
    assert flash.second_half and any(s.sync for s in flash.tests)
    quick_ids = {s.id for s in PROFILES["quick"].tests}
    assert {"RND4K_Q32T1_read", "SEQ1M_Q8T1_read"} <= quick_ids
    assert len(PROFILES["standard"].tests) == 8


def test_profile_names_for_the_parser_match_the_profiles():
    from disksleuth import PROFILE_NAMES

    assert tuple(PROFILES) == PROFILE_NAMES


def test_documents_read_in_one_go_get_distinct_series_times():
    """Under load two status documents can be read at one clock reading: their series points used to share a
    t_s, and the store's UNIQUE (test, t_s) then refused the whole run (it went to unsaved/)."""
    from disksleuth.analysis.results import series_from_samples
    from disksleuth.model.fio import StatusSample

    samples = [
        StatusSample(1.0, 0, 0, 0, 1000, 1000),
        StatusSample(1.2, 10_000_000, 0, 100, 1100, 1100),
        StatusSample(1.2, 20_000_000, 0, 200, 1200, 1200),  # read together with the one before
        StatusSample(1.4, 30_000_000, 0, 300, 1300, 1300),
    ]
    times = [p.t_s for p in series_from_samples(samples)]
    assert len(times) == 3 and times == sorted(set(times))
    assert [p.read_mbps for p in series_from_samples(samples)] == [100.0, 100.0, 100.0]
