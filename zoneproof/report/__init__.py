"""Reports of a run: ``summary`` (summary.json), ``plots`` and ``marks`` (timeline figures),
``versions``, ``allure_html`` (the offline allure HTML report), ``slo_table``, ``evidence``
(read back from the cluster), ``browser`` (looking at the report in headless chromium), and
the certification: ``certification`` (certification.yaml), ``bundle``, ``attestation``.
Import the sub-module you need."""
