"""The node agent's install manifests, image choice, blast radius and switch renewals (no cluster)."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest
from kubernetes.client.rest import ApiException

from zoneproof.binaries.images import recipe
from zoneproof.cluster import nodeagent
from zoneproof.cluster.existing import blast_radius
from zoneproof.nodeagent.protocol import NAMESPACE, SWITCH_LEASE


def test_manifests_run_the_chosen_image_privileged_on_every_node(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(nodeagent.IMAGE_ENV, raising=False)
    assert nodeagent.image() == f"localhost/zoneproof/node-agent:{recipe.DEFAULT_TAG}"
    monkeypatch.setenv(nodeagent.IMAGE_ENV, "registry.example/agent:1")
    objects = nodeagent.manifests(nodeagent.image())
    assert {o["kind"] for o in objects} == {"Namespace", "ServiceAccount", "Role", "RoleBinding",
                                            "DaemonSet"}
    assert {o["metadata"].get("namespace", NAMESPACE) for o in objects} == {NAMESPACE}
    pod = next(o for o in objects if o["kind"] == "DaemonSet")["spec"]["template"]["spec"]
    assert pod["containers"][0]["image"] == "registry.example/agent:1"
    assert pod["hostPID"] is True and pod["tolerations"] == [{"operator": "Exists"}]
    assert pod["containers"][0]["securityContext"]["privileged"] is True


def test_blast_radius_lists_every_node_by_zone() -> None:
    text = blast_radius({"": ["cp"], "zone-a": ["a1", "a2"], "zone-b": ["b1"]})
    assert "any of these 4 nodes" in text
    assert "(no zone label): cp" in text and "zone-a: a1, a2" in text and "zone-b: b1" in text


class FakeLeases:
    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    def patch_namespaced_lease(self, name: str, namespace: str, body: dict[str, Any]) -> Any:
        if not self.bodies:
            raise ApiException(status=404)
        self.bodies.append(body)
        return SimpleNamespace()

    def create_namespaced_lease(self, namespace: str, body: dict[str, Any]) -> Any:
        self.bodies.append(body)
        return SimpleNamespace()


def test_the_switch_is_renewed_only_while_wanted() -> None:
    leases, held = FakeLeases(), [True]
    switch = nodeagent._Switch(leases, 0.5, lambda: held[0])  # type: ignore[arg-type]
    switch.start()
    time.sleep(0.55)
    held[0] = False
    time.sleep(0.25)
    count = len(leases.bodies)
    assert count >= 4, "created, then renewed every switch_s / 5"
    times = [b["spec"]["renewTime"] for b in leases.bodies]
    assert len(set(times)) == len(times), "every renewal changes renewTime"
    assert leases.bodies[0]["metadata"]["name"] == switch.name
    assert switch.name.startswith(f"{SWITCH_LEASE}-"), "one switch per suite process"
    assert leases.bodies[0]["spec"]["leaseDurationSeconds"] == 1  # whole seconds, at least 1
    time.sleep(0.3)
    assert len(leases.bodies) == count, "no renewal once nothing is held"
