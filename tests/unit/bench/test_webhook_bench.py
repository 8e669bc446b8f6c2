"""``zoneproof bench webhook``'s load is what it says: reviews the reference handler patches."""

from __future__ import annotations

import base64
import json
import os

from zoneproof.bench import BENCHES, samples
from zoneproof.bench import webhook as bench
from zoneproof.components.reference.ha_config import mutation, review, variants
from zoneproof.specs.ha_config import facts, keys


def test_bench_reviews_are_answered_with_a_patch() -> None:
    cluster = facts.StaticFacts(namespaces={"shop": facts.NamespaceInfo(
        "shop", annotations={keys.ANNOTATION_ZONES: "zone-a,zone-b,zone-c"})}, nodes=6)
    versions = set()
    for body in bench.review_bodies():
        answer = review.answer_review(body.replace(b"UID-PLACEHOLDER", b"u-1"), cluster,
                                      settings=mutation.TolerationDefaults(),
                                      behaviour=variants.REFERENCE.behaviour)
        out = json.loads(answer.body)
        versions.add(out["apiVersion"])
        assert answer.status == 200 and out["response"]["allowed"] is True
        ops = json.loads(base64.b64decode(out["response"]["patch"]))
        assert any(op["path"].endswith("/topologySpreadConstraints") for op in ops), ops
    assert versions == {"admission.k8s.io/v1", "admission.k8s.io/v1beta1"}
    assert BENCHES["webhook"] is bench.bench_webhook


def test_machine_counters_are_read() -> None:
    assert bench.listen_overflows() >= 0
    assert samples.cpu_seconds(os.getpid()) > 0
