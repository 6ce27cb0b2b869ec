"""pytest wiring for the Python API tests: lists the components skipped as not implemented yet."""
import sys


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    mod = sys.modules.get("test_api") or sys.modules.get("tests.python.test_api")
    skipped = getattr(mod, "SKIPPED", None)
    if not skipped:
        return
    terminalreporter.section("tokenkit: skipped because the library does not implement a component yet")
    for reason in sorted(set(skipped.values())):
        terminalreporter.write_line(reason)
