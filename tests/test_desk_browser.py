"""`brain desk` in a real browser: headless Chromium (Debian's `chromium` and `chromium-driver`,
which tools/test installs when missing) driven by Selenium, against `brain desk` run as a process
over a copy of the fixture vault. Clicking approve and drop must change the files exactly as
`brain inbox` does; every page is saved as a screenshot under the test's temp dir (`shots/`)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import brain
from test_desk import snapshot, start, stop

pytestmark = pytest.mark.slow  # headless Chromium

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


@pytest.fixture
def desk_url(vault: Path) -> Iterator[str]:
    # Lookups to fill the ledger and a miss for the backlog, logged as an agent asks. The miss's
    # unknown word is what a synonym row (added by a click below) gives the libgit2 bullet, which
    # then holds the whole question and stands out: an edit that answers the miss.
    agent = {"BRAIN_CALLER": "claude-code", "BRAIN_SESSION": "s-1"}
    for query in ("libgit2 hooks", "paynova status", "libgit2 hooks", "zorblax hooks"):
        brain("find", "--vault", str(vault), query, env=agent)
    proc, url = start(vault)
    try:
        yield url
    finally:
        stop(proc)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[object]:
    assert Path(CHROMEDRIVER).exists(), "install chromium and chromium-driver (tools/test does)"
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM  # never let Selenium Manager download a browser
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(arg)
    options.add_argument("--window-size=1280,900")
    options.add_argument(f"--user-data-dir={tmp_path / 'chromium'}")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def shot(driver: object, tmp_path: Path, name: str) -> Path:
    from selenium.webdriver.remote.webdriver import WebDriver

    assert isinstance(driver, WebDriver)
    folder = tmp_path / "shots"
    folder.mkdir(exist_ok=True)
    # the whole page, not only the window (Chromium's DevTools protocol)
    import base64

    png = driver.execute_cdp_cmd(  # type: ignore[attr-defined]
        "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}
    )
    path = folder / f"{name}.png"
    path.write_bytes(base64.b64decode(png["data"]))
    return path


def click_through(driver: object, element: object) -> None:
    """Click what loads another page (a form's button, a link) and wait until it has: read at
    once, the page is still the old one, whose elements go stale while they are read (as they
    did under load: a StaleElementReferenceException on the note after a drop)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.remote.webdriver import WebDriver
    from selenium.webdriver.remote.webelement import WebElement
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    assert isinstance(driver, WebDriver)
    assert isinstance(element, WebElement)
    old = driver.find_element(By.TAG_NAME, "html")
    element.click()
    WebDriverWait(driver, 60).until(ec.staleness_of(old))


def arrive(driver: object, url: str) -> str:
    """Open `url` and wait for the desk's page it leads to (its heading): the page the token
    lands on moves on by itself, after `get` has returned."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.remote.webdriver import WebDriver
    from selenium.webdriver.support.ui import WebDriverWait

    assert isinstance(driver, WebDriver)
    driver.get(url)
    title = WebDriverWait(driver, 60).until(lambda d: d.find_elements(By.TAG_NAME, "h1"))
    return str(title[0].text)


def test_every_page_approve_and_drop_by_clicking(
    vault: Path, twin: Path, desk_url: str, browser: object, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.remote.webdriver import WebDriver
    from selenium.webdriver.support.ui import Select, WebDriverWait

    d = browser
    assert isinstance(d, WebDriver)
    update = "libgit2 — libgit2 runs no client-side hooks; brain runs pre-commit itself first"
    for v in (vault, twin):  # an update of a bullet the vault has (said so), shown side by side
        assert brain("propose", "--vault", str(v), update, "--force").code == 0
    assert arrive(d, desk_url) == "Inbox"
    assert d.current_url.endswith("/inbox")  # the token left the address bar for a cookie
    assert "token" not in d.current_url
    items = d.find_elements(By.CSS_SELECTOR, "li.item")
    assert len(items) == 4
    assert "from claude · 2026-11-04" in items[0].text
    assert "Updates AI/LEARNINGS.md:7" in items[3].text
    changed = [e.text for e in items[3].find_elements(By.CSS_SELECTOR, ".diff ins")]
    assert changed[0].strip() == "runs no"  # word by word: what both say is not marked
    assert not any("client-side" in c for c in changed)
    shot(d, tmp_path, "inbox")

    # approve #2 to LEARNINGS by clicking; the terminal does the same on the twin
    item = d.find_element(By.ID, "item-2")
    Select(item.find_element(By.TAG_NAME, "select")).select_by_value("LEARNINGS")
    click_through(d, item.find_element(By.CSS_SELECTOR, "button.approve"))
    note = d.find_element(By.ID, "note").text
    assert note.startswith("Approved in AI/LEARNINGS.md:"), note
    assert brain("inbox", "approve", "2", "--to", "LEARNINGS", "--vault", str(twin)).code == 0
    assert snapshot(vault) == snapshot(twin)
    shot(d, tmp_path, "inbox-approved")

    # drop what is now #1
    click_through(d, d.find_element(By.ID, "item-1").find_element(By.CSS_SELECTOR, "button.drop"))
    assert d.find_element(By.ID, "note").text.startswith("Dropped:")
    assert brain("inbox", "drop", "1", "--vault", str(twin)).code == 0
    assert snapshot(vault) == snapshot(twin)

    # edit what is now #1 (helm diff plugin), then approve it
    item = d.find_element(By.ID, "item-1")
    item.find_element(By.CSS_SELECTOR, "details.edit summary").click()
    area = item.find_element(By.NAME, "text")
    area.clear()
    area.send_keys("helm diff plugin — always run helm diff first")
    click_through(d, item.find_element(By.CSS_SELECTOR, "details.edit button"))
    assert d.find_element(By.ID, "note").text.startswith("Edited and approved in AI/MEMORY.md")
    inbox = twin / "AI/INBOX.md"
    inbox.write_text(
        inbox.read_text(encoding="utf-8").replace(
            "run helm diff upgrade before every helm upgrade on staging-eu-1",
            "always run helm diff first",
        ),
        encoding="utf-8",
    )
    assert brain("inbox", "approve", "1", "--vault", str(twin)).code == 0
    assert snapshot(vault) == snapshot(twin)

    # a proposal from elsewhere appears on the next load; bulk-approve the rest by ticking
    brain("propose", "--vault", str(vault), "desk bulk — ticked proposals are approved together")
    brain("propose", "--vault", str(twin), "desk bulk — ticked proposals are approved together")
    d.get(desk_url.split("?", maxsplit=1)[0] + "inbox")
    assert len(d.find_elements(By.CSS_SELECTOR, "li.item")) == 2
    d.find_element(By.ID, "all").click()
    click_through(d, d.find_element(By.CSS_SELECTOR, "#bulk button[value=approve]"))
    assert d.find_element(By.ID, "note").text.startswith("Approved 2 of 2.")
    for _ in range(2):
        assert brain("inbox", "approve", "1", "--vault", str(twin)).code == 0
    assert snapshot(vault) == snapshot(twin)
    assert "The inbox is empty" in d.find_element(By.TAG_NAME, "main").text

    # misses: the unanswered query, answered with a synonym row by a click
    click_through(d, d.find_element(By.LINK_TEXT, "Misses"))
    main = d.find_element(By.TAG_NAME, "main").text
    assert "zorblax hooks" in main
    shot(d, tmp_path, "misses")
    row = d.find_element(By.CSS_SELECTOR, "table.misses tbody tr")
    row.find_element(By.TAG_NAME, "summary").click()
    row.find_element(By.NAME, "expansion").send_keys("libgit2")
    click_through(d, row.find_element(By.CSS_SELECTOR, "form[action='/misses/synonym'] button"))
    assert "Added to AI/synonyms.tsv: zorblax → libgit2" in d.find_element(By.ID, "note").text
    assert "zorblax\tlibgit2" in (vault / "AI/synonyms.tsv").read_text(encoding="utf-8")

    def answered(drv: WebDriver) -> str:
        # log is read again in the background: a slow reading shows the last one, marked
        found = drv.find_elements(By.CSS_SELECTOR, "table.answered")
        if not found:
            drv.refresh()
        return found[0].text if found else ""

    assert "zorblax hooks" in WebDriverWait(d, 120, poll_frequency=1).until(answered)
    shot(d, tmp_path, "misses-answered")

    # ledger: figures, both charts drawn by the vendored Chart.js, top queries
    click_through(d, d.find_element(By.LINK_TEXT, "Ledger"))
    main = d.find_element(By.TAG_NAME, "main").text
    assert "lookups" in main
    assert "libgit2 hooks" in main
    drawn = d.execute_script(
        "return Chart && ['by-day', 'by-caller'].map(id => !!Chart.getChart(id))"
    )
    assert drawn == [True, True]
    shot(d, tmp_path, "ledger")

    click_through(d, d.find_element(By.LINK_TEXT, "Health"))
    # doctor runs in the background: the page reloads itself until its reading is there
    checks = WebDriverWait(d, 120).until(
        lambda drv: drv.find_element(By.CSS_SELECTOR, "table.checks")
    )
    assert "sqlite" in checks.text
    shot(d, tmp_path, "health")

    # search: find's ranking and match signals
    click_through(d, d.find_element(By.LINK_TEXT, "Search"))
    box = d.find_element(By.NAME, "q")
    box.send_keys("libgit2 hooks")
    box.submit()  # returns before the answer's page is there: wait for it
    hits = WebDriverWait(d, 60).until(lambda drv: drv.find_elements(By.CSS_SELECTOR, "li.hit"))
    from brain.commands.find import find

    expected = find(vault, "libgit2 hooks", limit=20).hits
    shown = [h.find_element(By.CSS_SELECTOR, "code.where").text for h in hits]
    assert shown == [f"{h.path}:{h.line}" for h in expected]
    badges = hits[0].find_elements(By.CSS_SELECTOR, ".badge")
    assert [b.text for b in badges] == list(expected[0].match)
    shot(d, tmp_path, "search")

    # an open page learns that the vault changed elsewhere and offers a reload
    banner = d.find_element(By.ID, "changed")
    assert not banner.is_displayed()
    brain("propose", "--vault", str(vault), "desk live — an open page offers a reload")
    WebDriverWait(d, 30).until(lambda _: banner.is_displayed())
    click_through(d, banner.find_element(By.LINK_TEXT, "Reload"))
    assert d.find_element(By.CSS_SELECTOR, ".count").text == "1"


def test_the_start_page_opens_the_desk_in_a_real_browser(vault: Path, browser: object) -> None:
    """The file `brain desk` opens the browser on leads it in: from a file:// page the browser
    sends no SameSite=Strict cookie along a redirect (a 303 after the token landed on a 403), so
    the tokened URL answers with a page that moves on by itself, as the desk's own."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.remote.webdriver import WebDriver

    from brain.desk import door

    d = browser
    assert isinstance(d, WebDriver)
    proc, _ = start(vault)
    page = door.folder() / f"desk-{proc.pid}.html"
    try:
        assert arrive(d, page.as_uri()) == "Inbox"
        assert d.current_url.endswith("/inbox")  # the token left the address bar for a cookie
        assert "zanzibar quota" in d.find_element(By.TAG_NAME, "main").text
    finally:
        stop(proc)
    assert not page.exists()
