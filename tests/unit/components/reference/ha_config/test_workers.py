"""Worker processes: several processes answer on one port, alike, and die with the first."""

from __future__ import annotations

import concurrent.futures
import http.client
import os
import signal
import ssl
import subprocess
import sys
from pathlib import Path

from zoneproof._util import certs, waiting
from zoneproof.bench import procstat
from zoneproof.bench.webhook import review_bodies
from zoneproof.components.reference.ha_config import mutation, review, variants, workers
from zoneproof.specs.ha_config import facts, keys

_STATIC = [sys.executable, "-m", "zoneproof.components.reference.ha_config.static_server"]


def test_a_limit_is_shared_out_rounded_up() -> None:
    assert [workers.per_worker(512, n) for n in (1, 2, 3)] == [512, 256, 171]
    assert workers.per_worker(1, 4) == 1


def test_two_workers_share_the_port_answer_alike_and_die_with_the_first(tmp_path: Path) -> None:
    ca = certs.make_ca("workers-test-ca")
    crt, key = certs.issue_cert(ca, "webhook", sans=("127.0.0.1",)).write(tmp_path, "tls")
    process = subprocess.Popen([*_STATIC, str(crt), str(key), "shop", "2"], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        (child,) = procstat.children(process.pid)
        context = ssl.create_default_context(cadata=ca.cert_pem.decode())
        body = review_bodies()[1].replace(b"UID-PLACEHOLDER", b"u-1")
        cluster = facts.StaticFacts(namespaces={"shop": facts.NamespaceInfo(
            "shop", annotations={keys.ANNOTATION_ZONES: "zone-a,zone-b,zone-c"})}, nodes=6)
        expected = review.answer_review(body, cluster, settings=mutation.TolerationDefaults(),
                                        behaviour=variants.REFERENCE.behaviour).body
        before = {pid: procstat.cpu_seconds(pid) for pid in (process.pid, child)}

        def reviews(_: int) -> list[tuple[int, bytes]]:
            conn = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=30)
            answers = []
            for _ in range(15):
                conn.request("POST", keys.WEBHOOK_PATH, body=body,
                             headers={"Content-Type": "application/json"})
                response = conn.getresponse()
                answers.append((response.status, response.read()))
            conn.close()
            return answers

        with concurrent.futures.ThreadPoolExecutor(40) as pool:
            answers = [a for batch in pool.map(reviews, range(40)) for a in batch]
        assert answers == [(200, expected)] * 600, "every worker answers as the handler does"
        used = {pid: procstat.cpu_seconds(pid) - was for pid, was in before.items()}
        assert all(seconds > 0 for seconds in used.values()), f"both workers served: {used}"
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
        waiting.wait_for(lambda: (not Path(f"/proc/{child}").exists()
                                  or "Z" in Path(f"/proc/{child}/stat").read_text().split(")")[1][:3],
                                  child), what="the second worker to die with the first", timeout_s=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
