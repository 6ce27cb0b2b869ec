"""pytest wiring for the Python API tests: lists the components skipped as not implemented yet;
the headless Chromium the page tests drive."""
import shutil
import sys

import pytest


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    mod = sys.modules.get("test_api") or sys.modules.get("tests.python.test_api")
    skipped = getattr(mod, "SKIPPED", None)
    if not skipped:
        return
    terminalreporter.section("tokenkit: skipped because the library does not implement a component yet")
    for reason in sorted(set(skipped.values())):
        terminalreporter.write_line(reason)


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium, headless, driven by selenium through chromium-driver."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    for exe in ("chromium", "chromedriver"):
        assert shutil.which(exe), f"{exe} is missing: scripts/setup.sh installs Debian's chromium and chromium-driver"
    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium")
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1100,700"):
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=opts)
    yield driver
    driver.quit()
