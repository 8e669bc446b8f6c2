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
    act_on_false: bool = True
    """True→False (the kubelet reports NotReady itself, e.g. runtime down) triggers deletes."""
    act_on_recovery: bool = False
    """Broken when True: a transition into Ready also triggers deletes."""
    act_on_not_ready_change: bool = False
    """Broken when True: False↔Unknown (still NotReady, no Ready→NotReady) triggers deletes."""
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
    only_failed_node: bool = True
    """Only the failed node's pods. Broken when False: every node in the failed node's zone
    (label ``topology.kubernetes.io/zone``) loses its selected pods."""
    split_namespaces: bool = True
    """The namespaces setting is a list. Broken when False: the comma-separated setting is
    compared as one string (right for one namespace, matches nothing for two)."""
    follow_up_when_fenced: bool = True
    """Act again on a node acted on before kcm fenced it (NoSchedule taint), once the fence
    is seen: a pod the scheduler bound to the node between its NotReady flip and the taint
    (a replacement scheduled back onto the dead node) is freed too. The reference's choice,
    not a contract row: seed 001 filters that event out ("All other events are filtered
    out"), so False is no broken variant (contract C4, relaxed)."""
    lease_before_acting: bool = True
    """Act only once the Lease is held. Broken when False: on taking a free or expired Lease
    it first catches up (deletes on NotReady nodes), then writes the Lease milliseconds
    later (inside any clock tolerance of a timeline)."""
    keep_competing: bool = True
    """A standby keeps trying for the Lease every retry period. Broken when False: once it
    has seen the holder renew the Lease (a healthy leader) it never tries again (it runs on,
    never leads), so a failover finds no candidate; a Lease left by a dead leader (never
    renewed) it still takes over."""
    stay_standby: bool = True
    """A standby that finds the Lease held runs on (C8). Broken when False: it exits (a
    non-zero code, like a lost leader's) at its first attempt that finds another holder."""
    take_expired: bool = True
    """A standby takes a Lease its holder left unrenewed for its duration (C7 after a
    death). Broken when False: it takes only a released (free) Lease."""
    expiry_fraction: float = 1.0
    """How much of the holder's lease duration unchanged makes its Lease takeable (C6).
    Broken below 1: the ``takes-lease-early`` variant takes it after half of it."""
    only_watched_namespaces: bool = True
    """Only pods of the watched namespaces (C2). Broken when False: the pods of every
    namespace are watched and deleted."""
    delete_terminating: bool = True
    """Pods already terminating are force-deleted too (C1: whatever its state; a graceful
    delete never finishes on a dead node). Broken when False: they are skipped as being
    deleted already."""
    resync_s: float = 0.0
    """0: act on triggers only (C3). Broken when > 0: while leading, the catch-up re-runs
    every ``resync_s`` seconds (a periodic resync), so a pod bound to a NotReady node long
    after its transition is deleted too."""


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
    Variant("ignores-false", "acts on Ready True→Unknown only, not True→False (kubelet "
            "reports NotReady itself)", Behaviour(act_on_false=False)),
    Variant("no-release-on-shutdown", "keeps the Lease on SIGTERM: failover waits it out",
            Behaviour(release_on_shutdown=False)),
    Variant("acts-on-expired-lease", "never renews the Lease after acquiring it, acts on anyway",
            Behaviour(renew_lease=False)),
    Variant("deletes-zone", "force-deletes the selected pods of every node in the failed "
            "node's zone", Behaviour(only_failed_node=False)),
    Variant("namespaces-one-string", "compares the comma-separated namespaces setting as one "
            "string (several namespaces: nothing matches)", Behaviour(split_namespaces=False)),
    Variant("acts-before-lease", "catches up on NotReady nodes just before writing the Lease "
            "it takes over", Behaviour(lease_before_acting=False)),
    Variant("gives-up-as-standby", "a standby stops trying for the Lease once it has seen "
            "the leader renew it (keeps running, never leads)", Behaviour(keep_competing=False)),
    Variant("exits-as-standby", "a standby exits once it finds the Lease held by another",
            Behaviour(stay_standby=False)),
    Variant("takes-only-released", "a standby takes only a released Lease, never one its "
            "holder left unrenewed (a dead or frozen leader's)", Behaviour(take_expired=False)),
    Variant("takes-lease-early", "a standby takes the Lease once it was unchanged for half "
            "the holder's lease duration", Behaviour(expiry_fraction=0.5)),
    Variant("every-namespace", "force-deletes the selected pods of the failed node in every "
            "namespace, not only the watched ones", Behaviour(only_watched_namespaces=False)),
    Variant("skips-terminating", "leaves the selected pods already terminating (deleted "
            "gracefully: on a dead node that never finishes)",
            Behaviour(delete_terminating=False)),
    Variant("acts-on-not-ready-change", "also force-deletes pods when a NotReady node's status "
            "changes False↔Unknown (no Ready→NotReady transition)",
            Behaviour(act_on_not_ready_change=True)),
    Variant("periodic-resync", "while leading, re-runs its catch-up every 3 s (a periodic "
            "resync), not on triggers only", Behaviour(resync_s=3.0)),
)

VARIANTS: dict[str, Variant] = {v.name: v for v in (REFERENCE, *_BROKEN)}

def get_variant(name: str) -> Variant:
    """The variant called ``name``; ConfigError lists the valid names."""
    return _variants.lookup(VARIANTS, name, "variant")
