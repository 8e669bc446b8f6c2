"""Root conftest: the zoneproof plugin loads from its pytest11 entry point. pytester tests it."""

pytest_plugins = ("pytester",)
