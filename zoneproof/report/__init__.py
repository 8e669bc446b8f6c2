"""Reports of a run: ``summary`` (summary.json), ``plots`` (timeline figures), ``versions``,
``allure_html`` (the offline allure HTML report). Import the sub-module you need."""
