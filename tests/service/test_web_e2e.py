"""The memory page end to end in headless Chromium (Debian's, driven by Playwright's Python API):
sign in with a key, see a memory, edit it, delete it, reload and find it gone, turn memory off.
Screenshots are saved under ``artifacts/e2e/`` in the repository (git-ignored)."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import convmem

from .conftest import auth

CHROMIUM = os.environ.get("CONVMEM_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "e2e"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]

if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
    if os.environ.get("CONVMEM_REQUIRE_BROWSER"):
        raise RuntimeError(f"Chromium is required for the browser test but {CHROMIUM} is missing")
    pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)

from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402


@pytest.fixture
def page() -> Iterator[Page]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        context = browser.new_context(
            viewport={"width": 1100, "height": 900}, accept_downloads=True
        )
        tab = context.new_page()
        tab.set_default_timeout(15_000)
        try:
            yield tab
        finally:
            context.close()
            browser.close()


def shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def assert_every_control_is_labelled(page: Page) -> None:
    unlabelled = page.evaluate(
        """() => [...document.querySelectorAll('input, textarea, select')]
                 .filter((el) => !el.labels || el.labels.length === 0)
                 .map((el) => el.id || el.name)"""
    )
    assert unlabelled == []


def test_sign_in_see_edit_delete_reload_and_turn_memory_off(
    page: Page, live_server: str, memory: convmem.Memory, client: TestClient
) -> None:
    token = memory.keys.create("acme", "user", user="alice", name="alice's page").token
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation(title="Trip to Lisbon")
    source = conv.append("user", "Remember that I prefer aisle seats.")
    conv.append("assistant", "Noted: aisle seats from now on.")
    alice.propose("Travels to Lisbon often", category="fact")
    assembled = client.post(f"/v1/conversations/{conv.id}/assemble",
                            json={"user_message": "Which seat?"}, headers=auth(token))  # fmt: skip
    assert assembled.status_code == 200

    page.goto(live_server)
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    assert page.evaluate("document.documentElement.lang") == "en"
    assert_every_control_is_labelled(page)
    page.get_by_label("API key").fill("cmk_wrong")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("Sign-in failed")
    shot(page, "01-sign-in-refused")

    page.get_by_label("API key").fill(token)
    page.get_by_label("API key").press("Enter")  # the form works from the keyboard
    heading = page.get_by_role("heading", name="What convmem remembers about you")
    expect(heading).to_be_visible()
    expect(heading).to_be_focused()
    memories = page.locator("#memory-list > li")
    expect(memories).to_have_count(2)
    saved = memories.filter(has_text="I prefer aisle seats.")
    expect(saved).to_contain_text("preference")
    expect(saved).to_contain_text("Saved")
    expect(saved.get_by_role("link", name="the message it came from")).to_be_visible()
    expect(memories.filter(has_text="Travels to Lisbon often")).to_contain_text("Suggested")
    expect(page.get_by_role("switch", name="Remember things about me")).to_be_checked()
    assert_every_control_is_labelled(page)
    shot(page, "02-memories")

    # the source link leads to the message in its conversation, with the last request's tokens
    saved.get_by_role("link", name="the message it came from").click()
    expect(page.get_by_role("heading", name="Trip to Lisbon")).to_be_visible()
    expect(page.locator(f"#node-{source.id}")).to_be_focused()
    expect(page.locator("#tree")).to_contain_text("active branch")
    table = page.get_by_role("table")
    expect(table).to_contain_text("memories")
    expect(table).to_contain_text("history")
    expect(page.locator("#last-assembly")).to_contain_text("Messages included")
    shot(page, "03-conversation")
    page.get_by_role("link", name="Memories").click()

    # edit
    saved = page.locator("#memory-list > li").filter(has_text="I prefer aisle seats.")
    saved.get_by_role("button", name="Edit").click()
    field = page.get_by_label("Edit this memory")
    expect(field).to_be_focused()
    field.fill("I prefer window seats.")
    shot(page, "04-editing")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status")).to_have_text("Memory updated.")
    edited = page.locator("#memory-list > li").filter(has_text="I prefer window seats.")
    expect(edited).to_have_count(1)
    expect(page.locator("#memory-list")).not_to_contain_text("aisle")
    assert [m.text for m in alice.memories.list(status="confirmed")] == ["I prefer window seats."]
    shot(page, "05-edited")

    # delete
    edited.get_by_role("button", name="Delete").click()
    expect(page.get_by_role("status")).to_have_text("Memory deleted.")
    expect(page.locator("#memory-list")).not_to_contain_text("window seats")
    shot(page, "06-deleted")

    # reload: still signed in (the key lives in this tab's session), and the memory is gone
    page.reload()
    expect(page.get_by_role("heading", name="What convmem remembers about you")).to_be_visible()
    expect(page.locator("#memory-list > li")).to_have_count(1)
    expect(page.locator("#memory-list")).not_to_contain_text("seats")
    page.get_by_label("Also show superseded and rejected memories").check()
    expect(page.locator("#memory-list > li")).to_have_count(1)  # deleted with its history
    assert all("seats" not in m.text for m in alice.memories.list(status=None))
    shot(page, "07-reloaded")

    # turn memory off, from the keyboard
    switch = page.get_by_role("switch", name="Remember things about me")
    switch.focus()
    page.keyboard.press("Space")
    expect(switch).not_to_be_checked()
    expect(page.get_by_role("status")).to_have_text("Memory is off.")
    expect(page.locator("#memory-state")).to_contain_text("Off")
    assert alice.memory_enabled() is False
    page.reload()
    expect(page.get_by_role("switch", name="Remember things about me")).not_to_be_checked()
    shot(page, "08-memory-off")

    # download the export
    with page.expect_download() as download:
        page.get_by_role("button", name="Download my data").click()
    exported = Path(download.value.path()).read_text()
    assert '"format": "convmem-export/1"' in exported or '"convmem-export/1"' in exported
    assert "Travels to Lisbon often" in exported

    # delete everything, after a confirmation (cancel first)
    page.get_by_role("button", name=re.compile("Delete everything")).click()
    dialog = page.get_by_role("dialog", name="Delete everything?")
    expect(dialog).to_be_visible()
    shot(page, "09-confirm-delete-everything")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    assert alice.conversations() != []
    page.get_by_role("button", name=re.compile("Delete everything")).click()
    page.get_by_role("dialog").get_by_role("button", name="Yes, delete everything").click()
    expect(page.get_by_role("status")).to_have_text("Everything was deleted.")
    expect(page.get_by_text("Nothing is remembered about you.")).to_be_visible()
    assert alice.conversations() == []
    assert alice.memories.list(status=None) == []
    shot(page, "10-everything-deleted")
