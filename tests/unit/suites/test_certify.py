"""certify: the verdict and bundle from a run's reports (the run itself faked: pure packing
logic); a bad key fails before anything runs; verify's exit codes and lines."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from zoneproof import errors
from zoneproof.chaos import catalog
from zoneproof.cli import main as cli
from zoneproof.components.harness import kinds
from zoneproof.report import browser, bundle, certification, evidence, summary
from zoneproof.suites import certify, profile, qualify

if TYPE_CHECKING:  # the fixtures' types (tests/unit/conftest.py)
    from conftest import KeyMaker, KeyPair


SAMPLE = qualify.repo_root() / "certification" / "profile.example.yaml"
#: The default set: an opt-in experiment runs (and is certified) only when named.
EXPERIMENTS = sorted(set(qualify.experiments(qualify.repo_root()))
                     - catalog.opt_in(qualify.repo_root() / "chaos"))
#: Skipped in a run of the sample's (host) components, as chaos/conftest.py skips them.
IN_CLUSTER_ONLY = catalog.in_cluster_only(qualify.repo_root() / "chaos")


@pytest.fixture
def keys(make_keys: KeyMaker) -> KeyPair:
    return make_keys("ed25519")


TWIN = "chaos/test_experiments.py::test_experiment_catches_a_broken_controller[zone-outage-x]"


def _summary(*, failing: str = "", skipped: str = "", slo_pass: bool = True,
             twin: str = "") -> dict[str, Any]:
    """``twin``: the outcome of a self-check test (empty: the self-check did not run)."""
    tests = [{"test": "conformance/ha_config/test_cases.py::test_case[a]", "outcome": "passed",
              "duration_s": 1.0}]
    if twin:
        tests.append({"test": TWIN, "outcome": twin, "duration_s": 9.0, "self_check": True})
    for name in EXPERIMENTS:
        outcome = ("failed" if name == failing else
                   "skipped" if name == skipped or name in IN_CLUSTER_ONLY else "passed")
        tests.append({"test": f"chaos/test_experiments.py::test_experiment[{name}]",
                      "outcome": outcome, "duration_s": 30.0})
    slos = [{"test": "chaos/test_experiments.py::test_experiment[zone-outage]",
             "name": "ha-controller-force-delete", "status": "PASS" if slo_pass else "FAIL",
             "threshold": 5.0, "observed": 1.2, "unit": "seconds", "message": "",
             "pass": slo_pass}]
    passed = not failing and not skipped and slo_pass
    return {"schema": summary.SCHEMA, "pytest_exit": 0 if passed else 1,
            "verdict": "PASS" if passed else "FAIL",
            "started": "s", "finished": "f", "duration_s": 600.0, "tests": tests, "slos": slos,
            "failures": [], "versions": {"zoneproof": "0.1.0", "components": {
                "webhook": {"starts": 1, "ran": [{"component": {"kind": "webhook",
                                                                "source": "registered"},
                                                  "sha256": "ab" * 32, "executable": "/py"}]},
                "controller": {"starts": 0, "ran": []}, "backend": "local"}}}


def _reports(root: Path, summary: dict[str, Any], *, registration: bool = True) -> Path:
    reports = root / "20260101T000000Z"
    (reports / "allure-report").mkdir(parents=True)
    (reports / "allure-report" / "index.html").write_text("<html></html>")
    (reports / "summary.json").write_text(json.dumps(summary))
    (reports / "junit.xml").write_text("<testsuites/>")
    for name in set(EXPERIMENTS) - IN_CLUSTER_ONLY:
        work = reports / "chaos" / name
        (work / "controller").mkdir(parents=True)
        for file in ("journal.json", "timeline.json", "faults.json", "timeline.png", "timeline.svg"):
            (work / file).write_text("{}")
        (work / "controller" / "zp-hac-0.log").write_text("started")
        (work / "controller" / "zp-hac-0.kubeconfig").write_text("secret client key")
        (work / "controller" / "zp-hac-0.key").write_text("secret")
    (reports / evidence.EVIDENCE).mkdir()
    (reports / evidence.EVIDENCE / evidence.CLUSTER).write_text(json.dumps(
        {"kubernetes": {"gitVersion": "v1.37.2"}, "etcd": "3.7.0"}))
    if registration:
        (reports / evidence.EVIDENCE / "registration-zp.json").write_text('{"kind": "x"}')
    return reports


def _fake_qualify(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, summary: dict[str, Any],
                  code: int = 0, **kwargs: bool) -> list[qualify.Options]:
    calls: list[qualify.Options] = []

    def execute(backend: object, spec: object, options: qualify.Options, **_: object
                ) -> qualify.Qualification:
        calls.append(options)
        basetemp = Path(next(a for a in options.pytest_args if a.startswith("--basetemp="))
                        .split("=", 1)[1])
        (basetemp / "popen-gw0" / "test_x0" / "webhook").mkdir(parents=True)
        (basetemp / "popen-gw0" / "test_x0" / "webhook" / "webhook.log").write_text("serving")
        (basetemp / "popen-gw0" / "test_x0" / "webhook" / "serving.key").write_text("secret")
        return qualify.Qualification(code, _reports(tmp_path / "reports", summary, **kwargs))

    def no_browser(*_: object) -> browser.Seen:
        raise errors.ConfigError("no chromium on PATH (test)")

    monkeypatch.setattr(qualify, "execute", execute)
    monkeypatch.setattr(browser, "look", no_browser)  # unit tests start no browser
    return calls


def _names(path: Path) -> list[str]:
    with tarfile.open(path, "r:gz") as tar:
        return tar.getnames()


def _certification(path: Path) -> dict[str, Any]:
    with tarfile.open(path, "r:gz") as tar:
        member = tar.extractfile(certify.CERTIFICATION)
        assert member is not None
        data: dict[str, Any] = yaml.safe_load(member.read())
        return data


def test_a_passing_run_certifies_and_verifies(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                              keys: KeyPair) -> None:
    calls = _fake_qualify(monkeypatch, tmp_path, _summary())
    done = certify.certify(profile.load(SAMPLE), keys.private, progress=print)
    assert (done.code, done.verdict) == (0, "PASS")
    options = calls[0]
    assert options.components == profile.load(SAMPLE).components
    assert "--zp-controller-lease=default/zoneproof-ha-controller" in options.pytest_args
    names = _names(done.bundle)
    assert "logs/popen-gw0/test_x0/webhook/webhook.log" in names
    assert "chaos/zone-outage/controller/zp-hac-0.log" in names
    assert not [n for n in names if n.endswith((".key", ".kubeconfig"))], "no secrets packed"
    assert {"certification.yaml", "summary.json", "junit.xml", "profile.yaml",
            "evidence/cluster.json", "evidence/registration-zp.json", "allure-report/index.html",
            bundle.MANIFEST, bundle.ATTESTATION} <= set(names)
    document = _certification(done.bundle)
    assert document["kind"] == "Certification" and document["verdict"] == "PASS"
    assert document["vendor"]["product"] == "zoneproof reference HA pair"
    assert document["backend"]["cluster"]["kubernetes"]["gitVersion"] == "v1.37.2"
    assert document["components"]["webhook"]["ran"][0]["sha256"] == "ab" * 32
    assert document["zoneproof"]["pins"]["kubernetes"].startswith("v1.")
    assert set(document["experiments"]) == set(EXPERIMENTS)
    assert IN_CLUSTER_ONLY, "the checkout has in-cluster experiments: this test needs one"
    for name in IN_CLUSTER_ONLY:  # skipped for host components: not a missing result
        assert document["experiments"][name]["verdict"] == certification.NOT_APPLICABLE
        assert "in-cluster" in document["experiments"][name]["outcome"]
    assert document["slos"][0]["threshold"] == 5.0
    verified = certify.verify(done.bundle, keys.public)
    assert verified.verdict == "PASS"
    assert verified.predicate["suites"]["chaos"]["verdict"] == "PASS"


@pytest.mark.parametrize(("summary", "problem"), [
    (_summary(failing="zone-outage"), "chaos experiment zone-outage: FAIL (failed)"),
    (_summary(skipped="etcd-quorum-loss"), "chaos experiment etcd-quorum-loss: NOT_RUN (skipped)"),
    (_summary(slo_pass=False), "SLO ha-controller-force-delete of zone-outage: FAIL"),
])
def test_a_failing_run_certifies_fail(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                      keys: KeyPair, summary: dict[str, Any], problem: str) -> None:
    _fake_qualify(monkeypatch, tmp_path, summary)
    done = certify.certify(profile.load(SAMPLE), keys.private, progress=print)
    assert (done.code, done.verdict) == (1, "FAIL")
    assert problem in _certification(done.bundle)["problems"]
    assert certify.verify(done.bundle, keys.public).verdict == "FAIL"
    assert cli.main(["verify", str(done.bundle), "--key", str(keys.public)]) == 1


OPT_IN = sorted(catalog.opt_in(qualify.repo_root() / "chaos"))


def _partial(*, asked: bool) -> dict[str, Any]:
    """A run that judged everything of the default set and left the opt-in experiments out,
    as asked (their default) or not."""
    run = {**_summary(), "verdict": "PARTIAL", "not_judged": [
        {"test": f"chaos/test_experiments.py::test_experiment[{name}]",
         "reason": f"opt-in: {name} runs only when named", "asked": asked} for name in OPT_IN]}
    return run


def test_a_run_partial_only_by_what_was_asked_certifies(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path, keys: KeyPair) -> None:
    """The default set leaves the opt-in experiments out (PARTIAL, exit 0): the bundle lists
    them as not certified and passes; a gap nobody asked for still fails it."""
    assert OPT_IN, "the checkout has opt-in experiments: this test needs one"
    _fake_qualify(monkeypatch, tmp_path, _partial(asked=True))
    done = certify.certify(profile.load(SAMPLE), keys.private, progress=print)
    document = _certification(done.bundle)
    assert (done.verdict, document["problems"]) == ("PASS", [])
    assert {f"chaos/test_experiments.py::test_experiment[{n}]" for n in OPT_IN} <= set(
        document["not_certified"])
    _fake_qualify(monkeypatch, tmp_path / "unasked", _partial(asked=False))
    failed = certify.certify(profile.load(SAMPLE), keys.private, progress=print)
    assert failed.verdict == "FAIL"
    assert "the run's verdict (summary.json) is PARTIAL" in _certification(failed.bundle)[
        "problems"]


def test_missing_evidence_fails_the_certification(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path, keys: KeyPair) -> None:
    _fake_qualify(monkeypatch, tmp_path, _summary(), registration=False)
    done = certify.certify(profile.load(SAMPLE), keys.private, progress=print)
    assert done.verdict == "FAIL"
    assert any("registration as the API server stored it was not read back" in p
               for p in _certification(done.bundle)["problems"])


def test_a_failed_qualification_never_certifies(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                keys: KeyPair) -> None:
    _fake_qualify(monkeypatch, tmp_path, _summary(), code=1)
    done = certify.certify(profile.load(SAMPLE), keys.private, progress=print)
    assert (done.code, done.verdict) == (1, "FAIL")


def test_a_bad_key_fails_before_anything_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                              keys: KeyPair) -> None:
    calls = _fake_qualify(monkeypatch, tmp_path, _summary())
    with pytest.raises(errors.ConfigError, match="is a public key"):
        certify.certify(profile.load(SAMPLE), keys.public, progress=print)
    assert not calls


def test_verify_cli_prints_the_verdict_or_what_is_wrong(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, keys: KeyPair, make_keys: KeyMaker,
        capsys: pytest.CaptureFixture[str]) -> None:
    _fake_qualify(monkeypatch, tmp_path, _summary())
    done = certify.certify(profile.load(SAMPLE), keys.private, progress=print)
    capsys.readouterr()
    assert cli.main(["verify", str(done.bundle), "--key", str(keys.public)]) == 0
    out = capsys.readouterr().out
    assert "VERIFIED" in out and out.rstrip().endswith("verdict: PASS")
    assert "experiment zone-outage: PASS" in out
    other = make_keys("ecdsa-p256")
    assert cli.main(["verify", str(done.bundle), "--key", str(other.public)]) == 1
    out = capsys.readouterr().out
    assert "NOT VERIFIED" in out and "not by the given key" in out
    assert cli.main(["verify", str(done.bundle), "--key", str(other.public), "-o", "json"]) == 1
    refused = json.loads(capsys.readouterr().out)
    assert refused["verified"] is False and any("not by the given key" in p
                                                  for p in refused["problems"])
    assert cli.main(["verify", str(done.bundle), "--key", str(keys.public), "-o", "yaml"]) == 0
    attested = yaml.safe_load(capsys.readouterr().out)
    assert (attested["verified"], attested["verdict"]) == (True, "PASS")
    assert attested["attested"]["verdict"] == "PASS"


def test_certify_cli_refuses_a_bad_profile_listing_every_problem(
        tmp_path: Path, keys: KeyPair, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "p.yaml"
    bad.write_text("apiVersion: zoneproof.dev/v1\nkind: CertificationProfile\nvendr: x\n")
    assert cli.main(["certify", str(bad), "--key", str(keys.private)]) == 4
    err = capsys.readouterr().err
    assert "did you mean 'vendor'" in err and "contact: missing" in err


def test_suite_verdicts_say_not_run_when_nothing_passed() -> None:
    verdicts = certification.suite_verdicts(summary.Summary(
        "FAIL", 1, "s", "f", 1.0, (summary.ItemResult("conformance/ha_config/x.py::t",
                                                      "skipped"),), {}))
    assert verdicts["conformance"]["verdict"] == "NOT_RUN"
    assert verdicts["chaos"]["verdict"] == "NOT_RUN"


def test_an_experiment_a_users_cluster_cannot_take_is_not_applicable_not_missing() -> None:
    """On a user's cluster what it takes shows only at run time: an experiment the run
    skipped as not applicable there is certified NOT_APPLICABLE with its reason, never
    required as evidence; any other skip is not excused."""
    outcomes = (
        summary.ItemResult("chaos/test_experiments.py::test_experiment[dns-outage]", "skipped",
                           message="not applicable: experiment dns-outage needs cluster-dns"),
        summary.ItemResult("chaos/test_experiments.py::test_experiment[zone-outage]", "skipped",
                           message="bed could not be made"),
        summary.ItemResult(TWIN, "skipped", message="not applicable: no broken twin"))
    found = certify.found_not_applicable(summary.Summary("PASS", 0, "s", "f", 1.0, outcomes, {}))
    assert found == {"dns-outage": "experiment dns-outage needs cluster-dns"}
    assert certify.found_not_applicable(None) == {}


def test_the_suites_certified_are_the_gates_and_judge_the_components() -> None:
    """Every kind's conformance suites and the chaos experiments; zoneproof's own tests and
    the self-check's twins are no suite's (the twins judge zoneproof, not the component)."""
    assert set(certification.SUITES) == {"conformance", "chaos"}
    assert set(certification.SUITES["conformance"]) == {
        f"{d}/" for kind in kinds.every() for d in kind.spec.conformance}
    outcomes = (summary.ItemResult("conformance/ha_controller/test_controller.py::t", "passed"),
                summary.ItemResult("tests/integration/test_bed.py::test_up", "failed"),
                summary.ItemResult(TWIN, "failed", self_check=True),
                summary.ItemResult("chaos/test_experiments.py::test_experiment[a]", "passed"))
    verdicts = certification.suite_verdicts(summary.Summary("FAIL", 1, "s", "f", 1.0, outcomes,
                                                            {}))
    assert {name: v["counts"] for name, v in verdicts.items()} == {
        "conformance": {"passed": 1}, "chaos": {"passed": 1}}
    assert "integration" in certification.NOT_CERTIFIED


@pytest.mark.parametrize("case", [
    (False, "", "self-check (broken twins): not run"),
    (True, "passed", "self-check (broken twins): ran {'passed': 1}"),
])
def test_the_certification_says_whether_the_self_check_ran(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, keys: KeyPair,
        capsys: pytest.CaptureFixture[str], case: tuple[bool, str, str]) -> None:
    """Without it the components still certify PASS (the twins judge zoneproof), but the
    record never claims it ran; asked for, it is passed on and its result attested."""
    asked, twin, shown = case
    calls = _fake_qualify(monkeypatch, tmp_path, _summary(twin=twin))
    done = certify.certify(profile.load(SAMPLE), keys.private, self_check=asked, progress=print)
    assert (done.code, done.verdict) == (0, "PASS") and calls[0].self_check is asked
    document = _certification(done.bundle)
    assert document["self_check"]["ran"] is asked
    chaos = document["suites"]["chaos"]["counts"]
    assert chaos["passed"] == len(EXPERIMENTS) - len(IN_CLUSTER_ONLY), "no twin among them"
    assert set(document["not_certified"]) == {"integration", "mutants"}
    assert certify.verify(done.bundle, keys.public).predicate["self_check"]["ran"] is asked
    capsys.readouterr()
    assert cli.main(["verify", str(done.bundle), "--key", str(keys.public)]) == 0
    assert shown in capsys.readouterr().out


def test_what_the_browser_missed_fails_the_certification(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path, keys: KeyPair) -> None:
    _fake_qualify(monkeypatch, tmp_path, _summary())
    monkeypatch.setattr(certify, "look_in_browser", lambda *_: [
        "experiment zone-outage: its page shows no SLO table"])
    done = certify.certify(profile.load(SAMPLE), keys.private, progress=print)
    assert done.verdict == "FAIL"
    assert "experiment zone-outage: its page shows no SLO table" in \
        _certification(done.bundle)["problems"]


def test_without_a_browser_that_is_recorded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                            keys: KeyPair) -> None:
    _fake_qualify(monkeypatch, tmp_path, _summary())
    done = certify.certify(profile.load(SAMPLE), keys.private, progress=print)
    with tarfile.open(done.bundle, "r:gz") as tar:
        member = tar.extractfile("evidence/browser/seen.json")
        assert member is not None
        seen = json.loads(member.read())
    assert seen["looked"] is False and "no chromium" in seen["reason"]


def _one_kind(tmp_path: Path, kind: str) -> profile.Profile:
    """The sample profile naming only ``kind`` (the other is the reference's, standing in)."""
    data = yaml.safe_load(SAMPLE.read_text())
    data["components"] = {kind: data["components"][kind]}
    path = tmp_path / f"{kind}-only.yaml"
    path.write_text(yaml.safe_dump(data))
    return profile.load(path)


def test_a_controller_alone_is_certified_with_the_reference_webhook_standing_in(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, keys: KeyPair,
        capsys: pytest.CaptureFixture[str]) -> None:
    calls = _fake_qualify(monkeypatch, tmp_path, _summary(), registration=False)
    alone = _one_kind(tmp_path, "controller")
    done = certify.certify(alone, keys.private, progress=print)
    assert (done.code, done.verdict) == (0, "PASS"), "no webhook registration evidence needed"
    assert "--ignore=conformance/ha_config" in calls[0].pytest_args
    assert "--ignore=conformance/ha_controller" not in calls[0].pytest_args
    document = _certification(done.bundle)
    assert list(document["components"]) == ["controller"], "only what the verdict is about"
    stood_in = document["stood_in"]["webhook"]
    assert stood_in["reference"] == "webhook 'reference' (variant reference)"
    assert stood_in["ran"][0]["sha256"] == "ab" * 32, "what stood in, as it ran"
    verified = certify.verify(done.bundle, keys.public)
    assert verified.predicate["stood_in"] == {"webhook": "webhook 'reference' (variant reference)"}
    assert list(verified.predicate["components"]) == ["controller"]
    capsys.readouterr()
    assert cli.main(["verify", str(done.bundle), "--key", str(keys.public)]) == 0
    out = capsys.readouterr().out
    assert "controller: certified" in out
    assert "webhook: not certified, the webhook 'reference' (variant reference) stood in" in out


def test_a_webhook_alone_still_needs_its_registration_read_back(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, keys: KeyPair) -> None:
    calls = _fake_qualify(monkeypatch, tmp_path, _summary(), registration=False)
    done = certify.certify(_one_kind(tmp_path, "webhook"), keys.private, progress=print)
    assert "--ignore=conformance/ha_controller" in calls[0].pytest_args
    document = _certification(done.bundle)
    assert list(document["components"]) == ["webhook"] and list(document["stood_in"]) == [
        "controller"]
    assert done.verdict == "FAIL" and any("registration as the API server stored it" in p
                                          for p in document["problems"])
