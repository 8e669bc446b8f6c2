"""Reference ``high-availability-config`` mutating webhook (Gardener GRM), per the spec.

Pure modules: ``keys`` (label/annotation keys), ``gostrconv`` (Go parsing rules),
``payloads`` (raw JSON types), ``facts`` (what the handler reads from the cluster),
``decoding``, ``rules`` and ``mutation`` (the handler), ``patches`` (RFC 6902),
``review`` (AdmissionReview in/out), ``config`` (MutatingWebhookConfiguration),
``selection`` (the API server's webhook matching), ``variants`` (broken builds),
``cases`` and ``simulation`` (data-driven conformance cases, in-process).
I/O modules: ``informers`` (watch caches), ``companion`` (the §11 node controller),
``server`` (HTTPS process), ``cli``. Run ``python -m zoneproof.components.reference.ha_config --help``.
"""

__all__: list[str] = []
