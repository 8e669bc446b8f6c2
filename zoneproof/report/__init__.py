"""Reports of a run: every artefact zoneproof writes.

``summary`` (summary.json, read back typed), ``junit`` (JUnit/pytest properties: SLO
results, figures), ``artefacts`` (a chaos run's timeline.json, faults.json, plots,
journal), ``plots`` and ``marks`` (timeline figures), ``versions``, ``allure_html`` (the
offline allure HTML report), ``slo_table``, ``evidence`` (read back from the cluster),
``browser`` (looking at the report in headless chromium), and the certification:
``certification`` (certification.yaml), ``bundle``, ``attestation``. Not here: computing
figures or verdicts (slo). Import the sub-module you need.
"""
