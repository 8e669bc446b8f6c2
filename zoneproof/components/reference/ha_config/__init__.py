"""Reference ``high-availability-config`` mutating webhook (Gardener GRM), per the spec.

Pure modules: ``gostrconv`` (Go parsing rules), ``decoding``, ``rules`` and ``mutation``
(the handler), ``patches`` (RFC 6902), ``review`` (AdmissionReview in/out), ``variants``
(broken builds), ``component`` (its entry in the component registry). The spec's
vocabulary (keys, payloads, facts, registration) is in ``zoneproof.specs.ha_config``.
I/O modules: ``informers`` (watch caches), ``companion`` (the §11 node controller),
``server`` (HTTPS process), ``cli``. Run ``python -m zoneproof.components.reference.ha_config --help``.
"""

__all__: list[str] = []
