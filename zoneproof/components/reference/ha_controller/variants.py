"""Behaviour flags of the controller and the named, deliberately broken variants.

Each broken variant flips exactly one flag of the reference, so each conformance check
has one wrong component proving it can fail.
"""

from __future__ import annotations

from dataclasses import dataclass

from zoneproof.components.reference import _variants

__all__ = ["REFERENCE", "VARIANTS", "Behaviour", "Variant", "get_variant"]


@dataclass(frozen=True, slots=True)
class Behaviour:
    """What the controller does; the defaults are the correct (reference) behaviour."""

    act_on_unknown: bool = True
    """True→Unknown (kubelet stopped reporting) triggers deletes, like True→False."""
    act_on_recovery: bool = False
    """Broken when True: a transition into Ready also triggers deletes."""
    use_selector: bool = True
    """Only pods matching the label selector are deleted."""
    grace_period_seconds: int | None = 0
    """0 = force delete; None = the pod's own grace period (stuck Terminating on a dead node)."""
    leader_election: bool = True
    """Only the Lease holder acts."""
    exit_on_lease_loss: bool = True
    """Exit at once when the Lease cannot be renewed (no lame-duck work)."""
    reconcile: bool = True
    """Act on already-NotReady nodes on start, on re-list and on becoming leader."""
    release_on_shutdown: bool = True
    """Release the Lease on SIGTERM so a standby takes over without waiting it out."""
    renew_lease: bool = True
    """Renew the Lease while leading and act only while renewed. Broken when False: never
    renews after acquiring it yet acts on (a hung renew loop the workers ignore), so it acts
    on an expired Lease even when nobody takes it over."""


Variant = _variants.Variant[Behaviour]


REFERENCE = Variant("reference", "nothing: the correct controller", Behaviour())

_BROKEN = (
    Variant("acts-on-recovery", "also force-deletes pods when a node goes NotReady→Ready",
            Behaviour(act_on_recovery=True)),
    Variant("ignores-selector", "deletes every pod on the node, not only selector matches",
            Behaviour(use_selector=False)),
    Variant("graceful-delete", "deletes without grace period 0: pods hang Terminating",
            Behaviour(grace_period_seconds=None)),
    Variant("no-leader-election", "no Lease: every replica acts (two actors)",
            Behaviour(leader_election=False)),
    Variant("survives-lease-loss", "keeps running and acting after losing the Lease",
            Behaviour(exit_on_lease_loss=False)),
    Variant("no-reconcile", "misses transitions during downtime or standby (no reconcile)",
            Behaviour(reconcile=False)),
    Variant("ignores-unknown", "acts on Ready True→False only, not True→Unknown",
            Behaviour(act_on_unknown=False)),
    Variant("no-release-on-shutdown", "keeps the Lease on SIGTERM: failover waits it out",
            Behaviour(release_on_shutdown=False)),
    Variant("acts-on-expired-lease", "never renews the Lease after acquiring it, acts on anyway",
            Behaviour(renew_lease=False)),
)

VARIANTS: dict[str, Variant] = {v.name: v for v in (REFERENCE, *_BROKEN)}

def get_variant(name: str) -> Variant:
    """The variant called ``name``; ConfigError lists the valid names."""
    return _variants.lookup(VARIANTS, name, "variant")
