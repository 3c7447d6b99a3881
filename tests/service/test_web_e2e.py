"""The memory page end to end in headless Chromium (Debian's, driven by Playwright's Python API):
sign in with a key, see a memory, edit it, delete it, reload and find it gone, turn memory off.
Screenshots are saved under ``artifacts/e2e/`` in the repository (git-ignored)."""

from __future__ import annotations

import base64
import os
import re
import shutil
import time
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

from playwright.sync_api import Locator, Page, Route, expect, sync_playwright  # noqa: E402


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


# --- the conversation view at real lengths, and the memory page's edits -----------------------

WIDTHS = (1280, 390)
# The view loads 30 messages at a time, whatever the conversation's length; a screen of content
# loaded (one page of messages with the report) must stay under this height at either width
MAX_HEIGHT_PER_PAGE = 5_000
LOADED = 30


def long_conversation(memory: convmem.Memory, turns: int = 300) -> tuple[str, str, str, str]:
    """``2 * turns`` messages on the active branch: an edited first question (two versions), a
    regenerated reply near the end, a tool call with an oversized result, and some long replies.
    Returns the conversation's id, the edited first message's id, the original's and the
    regenerated reply's id."""
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation(title="A long planning chat")
    first = conv.append("user", "We need a plan for the Lisbon offsite in May, for 14 people.")
    edited = conv.edit(first.id, "We need a plan for the Lisbon offsite in June, for 16 people.")
    conv.append("assistant", "Decision: we'll hold the offsite at the LX Factory on 12 June.")
    conv.append("user", "Constraint: the whole offsite must stay under 9,500 EUR.")
    conv.append("assistant", "Noted: under 9,500 EUR. Where shall we start?")
    regenerated = ""
    for turn in range(2, turns):
        if turn == turns - 5:
            conv.append("assistant", "", tool_calls=[
                convmem.ToolCall("c1", "fetch_timetable", '{"city":"Lisbon","day":"2026-06-12"}')
            ])  # fmt: skip
            conv.append("tool", "timetable row; " * 600, tool_call_id="c1")
            continue
        conv.append("user", f"Question {turn}: what about item {turn} of the offsite plan, "
                    "the venues and the budget of 9,500 EUR?")  # fmt: skip
        reply = f"For item {turn}: book early and keep the receipts. " + (
            "Here is the longer version with every detail spelled out for the team. " * 8
            if turn % 10 == 0 else ""
        )  # fmt: skip
        answer = conv.append("assistant", reply)
        if turn == turns - 3:
            regenerated = conv.regenerate(answer.id, f"For item {turn}: book now.").id
    assert len(conv.branch()) == 2 * turns
    return conv.id, edited.id, first.id, regenerated


def keep_screenshot(page: Page, tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    shot(page, name)  # kept under artifacts/e2e/ for a person to look at


def page_height(page: Page) -> dict[str, int]:
    size: dict[str, int] = page.evaluate(
        "() => ({scroll: document.documentElement.scrollWidth, view: window.innerWidth,"
        " height: document.documentElement.scrollHeight})"
    )
    return size


def sign_in(page: Page, live_server: str, token: str) -> None:
    page.goto(live_server)
    page.get_by_label("API key").fill(token)
    page.get_by_label("API key").press("Enter")
    expect(page.get_by_role("heading", name="What convmem remembers about you")).to_be_visible()


def test_a_600_message_conversation_opens_at_its_newest_a_page_at_a_time(
    page: Page, live_server: str, memory: convmem.Memory, client: TestClient, tmp_path: Path
) -> None:
    token = memory.keys.create("acme", "user", user="alice").token
    conv_id, edited_id, original_id, regenerated_id = long_conversation(memory)
    assembled = client.post(
        f"/v1/conversations/{conv_id}/assemble",
        json={"user_message": "What did we decide about item 3?",
              "model": {"context_window": 3000, "max_output": 500}},
        headers=auth(token),
    )  # fmt: skip
    assert assembled.status_code == 200
    report = assembled.json()["report"]
    assert report["evicted_count"] > 0 and report["stubbed_ids"]
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url))

    sign_in(page, live_server, token)
    items = page.locator("#tree .branch > li")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server}/#/conversations/{conv_id}")
        page.reload()
        expect(page.get_by_role("heading", name="A long planning chat")).to_be_visible()
        expect(items).to_have_count(LOADED)
        expect(page.locator("#tree")).to_contain_text("The active branch: 600 messages")
        size = page_height(page)
        print(f"conversation view at {width} px, {LOADED} of 600 loaded: {size}")
        assert size["scroll"] == size["view"] == width, size
        assert size["height"] < MAX_HEIGHT_PER_PAGE, size
        keep_screenshot(page, tmp_path, f"20-conversation-600-at-{width}")
        # the tree's text never shows a literal null, nor does the report
        assert "null" not in page.locator("main").inner_text()
        # the regenerated reply is a fork among the newest: version 2 of 2
        fork = items.filter(has=page.locator(".versions"))
        expect(fork).to_have_count(1)
        expect(fork).to_contain_text("version 2 of 2")
        expect(page.locator(f"#node-{regenerated_id}")).to_contain_text("book now")
        # a tool call shows its name and its arguments
        call = page.locator("#tree .tool-calls").first
        expect(call).to_contain_text("fetch_timetable")
        expect(call).to_contain_text('{"city":"Lisbon","day":"2026-06-12"}')
        # what the last request did with each loaded message
        expect(page.locator(f"#node-{report['stubbed_ids'][0]} .mark-stubbed")).to_have_count(1)
        expect(page.locator(f"#node-{report['included_ids'][-1]} .mark-included")).to_have_count(1)
        # every section of the report has a readable name, its key beside it
        for row in page.locator("#last-assembly tbody th").all():
            name, key = row.inner_text().rsplit(" ", 1)
            assert name.strip() and name.strip() != key, row.inner_text()
        expect(page.get_by_role("table")).to_contain_text("What was said about people and things")
    # the page asked for one page of the branch, never the whole tree
    assert not [u for u in fetched if u.split("?")[0].endswith("/messages")]
    assert all("limit=30" in u for u in fetched if "/branch" in u)

    # jump to the last request's report, and back to the latest message
    page.get_by_role("button", name="Jump to the last request's report").click()
    expect(page.get_by_role("heading", name="Last assembled request")).to_be_focused()
    page.get_by_role("button", name="Jump to the latest message").click()
    newest = items.last.locator(".message")
    expect(newest).to_be_focused()

    # earlier messages, a page at a time, until the first
    page.get_by_role("button", name=re.compile("Show earlier messages")).click()
    expect(items).to_have_count(2 * LOADED)
    size = page_height(page)
    assert size["height"] < 2 * MAX_HEIGHT_PER_PAGE, size
    expect(items.first.locator(".message")).to_be_focused()
    for loaded in range(3 * LOADED, 600 + LOADED, LOADED):
        page.get_by_role("button", name=re.compile("Show earlier messages")).click()
        expect(items).to_have_count(min(loaded, 600))
    expect(page.get_by_role("button", name=re.compile("Show earlier messages"))).to_have_count(0)
    expect(items.first).to_contain_text("version 2 of 2")
    keep_screenshot(page, tmp_path, "21-conversation-600-all-loaded-at-390")

    # switch versions at the first question: the original (no replies), then back
    items.first.get_by_role("button", name="Previous version").click()
    expect(page.locator("#tree .versions").first).to_contain_text("version 1 of 2")
    expect(page.locator(f"#node-{original_id}")).to_contain_text("in May, for 14 people")
    expect(page.locator("#tree")).to_contain_text("not the active branch")
    expect(items).to_have_count(1)  # the first version has no replies
    page.get_by_role("button", name="Back to the active branch").click()
    expect(items).to_have_count(LOADED)
    expect(items.last.locator(".message")).to_be_focused()
    # nothing changed on the server: viewing is not switching
    assert memory.scope("acme", "alice").conversation(conv_id).branch()[0].id == edited_id


def test_a_conversation_never_assembled_shows_no_null_and_the_list_pages(
    page: Page, live_server: str, memory: convmem.Memory
) -> None:
    token = memory.keys.create("acme", "user", user="alice").token
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation(title="Never assembled")
    conv.append("user", "Hello there.")
    conv.append("assistant", "Hello!")
    time.sleep(0.01)  # the list is newest first: this one is on the second page
    for n in range(57):
        alice.create_conversation(title=f"Chat {n:02d}")
    sign_in(page, live_server, token)
    page.get_by_role("link", name="Conversations").click()
    links = page.locator("#conversation-list > li")
    expect(links).to_have_count(50)
    expect(page.get_by_role("link", name="Never assembled")).to_have_count(0)
    page.get_by_role("button", name="Show more conversations").click()
    expect(links).to_have_count(58)
    expect(page.get_by_role("button", name="Show more conversations")).to_be_hidden()
    expect(links.nth(50).get_by_role("link")).to_be_focused()
    page.get_by_role("link", name="Never assembled").click()
    expect(page.get_by_role("heading", name="Never assembled")).to_be_visible()
    expect(page.locator("#tree .branch > li")).to_have_count(2)
    expect(page.locator("#last-assembly")).to_contain_text("No request has been assembled")
    assert "null" not in page.locator("main").inner_text()
    assert page.evaluate("document.getElementById('tree').textContent").find("null") == -1
    expect(page.get_by_role("button", name=re.compile("Show earlier"))).to_have_count(0)


def test_memory_page_suggestions_first_enter_saves_and_drafts_survive(
    page: Page, live_server: str, memory: convmem.Memory
) -> None:
    token = memory.keys.create("acme", "user", user="alice").token
    alice = memory.scope("acme", "alice")
    alice.remember("I prefer aisle seats.")
    alice.remember("I live in Porto.")
    alice.propose("Travels to Lisbon often", category="fact")
    page.set_viewport_size({"width": 390, "height": 900})
    page.goto(live_server)
    page.get_by_label("API key").fill(token)
    page.get_by_label("API key").press("Enter")
    items = page.locator("#memory-list > li")
    expect(items).to_have_count(3)
    expect(items.first).to_contain_text("Travels to Lisbon often")  # the suggestion leads
    expect(items.first).to_contain_text("Suggested")
    size = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert size == [390, 390]
    shot(page, "22-memories-at-390")

    # an unsaved edit survives a visit to another page
    porto = items.filter(has_text="I live in Porto.")
    porto.get_by_role("button", name="Edit").click()
    page.get_by_label("Edit this memory").fill("I live in Braga.")
    page.get_by_role("link", name="Conversations").click()
    expect(page.get_by_role("heading", name="Your conversations")).to_be_visible()
    page.get_by_role("link", name="Memories").click()
    field = page.get_by_label("Edit this memory")
    expect(field).to_have_value("I live in Braga.")
    # Escape with changes asks first; declining keeps the text
    page.once("dialog", lambda dialog: dialog.dismiss())
    field.press("Escape")
    expect(field).to_have_value("I live in Braga.")
    shot(page, "23-unsaved-edit-kept")

    # Enter saves (Shift+Enter would add a line)
    field.press("Enter")
    expect(page.get_by_role("status")).to_have_text("Memory updated.")
    expect(page.locator("#memory-list")).to_contain_text("I live in Braga.")
    expect(page.get_by_label("Edit this memory")).to_have_count(0)
    texts = [m.text for m in alice.memories.list(status="confirmed")]
    assert "I live in Braga." in texts and "I live in Porto." not in texts


def test_the_docs_page_renders_with_no_network(page: Page, live_server: str) -> None:
    asked: list[str] = []

    def only_loopback(route: Route) -> None:
        asked.append(route.request.url)
        if route.request.url.startswith(live_server):
            route.continue_()
        else:
            route.abort()

    page.route("**/*", only_loopback)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{live_server}/docs")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("convmem")
    expect(page.locator(".opblock").first).to_be_visible()
    assert all(url.startswith(live_server) for url in asked), asked
    shot(page, "24-docs-offline")


def test_a_replaced_memory_is_shown_and_restored_with_a_button(
    page: Page, live_server: str, memory: convmem.Memory
) -> None:
    token = memory.keys.create("acme", "user", user="alice", name="alice's page").token
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation(title="Seats")
    conv.append("user", "Remember that I prefer aisle seats.")
    conv.append("user", "Remember that I prefer window seats.")

    page.goto(live_server)
    page.get_by_label("API key").fill(token)
    page.get_by_label("API key").press("Enter")
    current = page.locator("#memory-list > li")
    expect(current).to_have_count(1)
    expect(current).to_contain_text("I prefer window seats.")
    expect(current).to_contain_text("Replaced")
    page.get_by_label("Also show superseded and rejected memories").check()
    old = page.locator("#memory-list > li.status-superseded")
    expect(old).to_have_count(1)
    expect(old).to_contain_text("I prefer aisle seats.")
    expect(old).to_contain_text("Replaced by a newer one")
    expect(
        page.locator("#memory-list > li").filter(has_text="I prefer window seats.")
    ).to_contain_text("“I prefer aisle seats.”")
    shot(page, "25-replaced")
    old.get_by_role("button", name="Restore").click()
    expect(page.get_by_role("status")).to_contain_text("Memory restored")
    expect(page.locator("#memory-list")).not_to_contain_text("window seats")
    assert [m.text for m in alice.memories.list()] == ["I prefer aisle seats."]
    shot(page, "26-restored")


# --- content parts: thumbnails from the caller's URL, chips, captions as text ---------------------

# a real 1x1 PNG, served for the application's URL
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
SHOT = "https://img.example/u/screenshot.png"
HOSTILE = '<img src=x onerror="window.pwned = 1">the quota banner'


def test_images_are_thumbnails_from_the_callers_url_files_are_chips(
    page: Page, live_server: str, memory: convmem.Memory
) -> None:
    token = memory.keys.create("acme", "user", user="alice", name="alice's page").token
    conv = memory.scope("acme", "alice").create_conversation(title="Quota")
    sent = conv.append("user", [
        {"type": "text", "text": "What is this banner?"},
        {"type": "image_url", "image_url": {"url": SHOT}, "width": 1280, "height": 720,
         "name": "screenshot.png", "caption": HOSTILE},
        {"type": "file", "blob_id": "file-1", "name": "limits.pdf", "page_count": 3,
         "extracted_text": "Quota: 500 requests per minute."},
        {"type": "image", "blob_id": "img-9", "width": 64, "height": 64, "name": "icon.png"},
    ])  # fmt: skip
    conv.append("assistant", "Your quota was reached.")

    outside: list[str] = []

    def serve_image(route: Route) -> None:
        outside.append(route.request.url)
        route.fulfill(status=200, content_type="image/png", body=PIXEL)

    def refuse(route: Route) -> None:
        outside.append(route.request.url)
        route.abort()

    page.route("https://img.example/**", serve_image)
    page.route(lambda url: not url.startswith(live_server) and "img.example" not in url, refuse)
    page.goto(live_server)
    page.get_by_label("API key").fill(token)
    page.get_by_label("API key").press("Enter")
    expect(page.get_by_role("heading", name="What convmem remembers about you")).to_be_visible()
    page.goto(f"{live_server}/#/conversations/{conv.id}")
    expect(page.get_by_role("heading", name="Quota")).to_be_visible()

    node = page.locator(f"#node-{sent.id}")
    thumb = node.locator("figure.thumb img")
    expect(thumb).to_have_count(1)
    expect(thumb).to_have_attribute("src", SHOT)
    expect(thumb).to_have_attribute("alt", HOSTILE)
    page.wait_for_function(
        "(el) => el.complete && el.naturalWidth === 1", arg=thumb.element_handle()
    )
    expect(node.locator("figcaption")).to_contain_text("screenshot.png, 1280\u00d7720")
    expect(node.locator("figcaption")).to_contain_text(HOSTILE)  # as text, not markup
    expect(node.locator(".chip-file")).to_have_text("limits.pdf, 3 pages")
    expect(node.locator(".chip-image")).to_have_text("icon.png, 64\u00d764")  # no URL: a chip
    expect(node).to_contain_text("What is this banner?")
    shot(page, "30-conversation-with-parts")

    injected = page.evaluate("() => [window.pwned, document.querySelectorAll('img').length]")
    assert injected == [None, 1]
    assert outside == [SHOT]  # the caller's URL, once; nothing else from outside


def test_people_and_things_are_listed_deleted_and_a_fact_kept_as_a_memory(
    page: Page, live_server: str, memory: convmem.Memory
) -> None:
    token = memory.keys.create("acme", "user", user="alice").token
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation(title="Family")
    conv.append("user", "My sister Ana Lopez moved to Porto last spring.")
    conv.append("assistant", 'Did Ana say "<img src=x onerror=alert(1)>" about it?')
    messages_before = len(conv.messages())
    page.goto(live_server)
    page.get_by_label("API key").fill(token)
    page.get_by_label("API key").press("Enter")
    section = page.get_by_role("region", name="People and things you've mentioned")
    expect(section).to_be_visible()
    entities = section.locator("#entity-list > li")
    ana = entities.filter(has_text="Ana Lopez")
    expect(ana).to_contain_text("Person")
    expect(ana).to_contain_text("my sister")
    expect(entities.filter(has_text="Porto")).to_have_count(1)
    assert_every_control_is_labelled(page)

    # what was said, quoted as text (markup in it stays text)
    ana.get_by_text("What was said about it (2)").click()
    facts = ana.locator(".fact")
    expect(facts).to_have_count(2)
    expect(facts.filter(has_text="<img src=x onerror=alert(1)>")).to_have_count(1)
    assert page.locator("#entity-list img").count() == 0
    # who said each: the assistant's words are never shown as the user's
    asked = facts.filter(has_text="<img src=x onerror=alert(1)>")
    expect(asked.locator(".speaker")).to_have_text("The assistant said:")
    expect(facts.filter(has_text="moved to Porto").locator(".speaker")).to_have_text("You said:")
    expect(asked).to_contain_text("only in the chat it came from")
    shot(page, "30-people-and-things")

    # the user's consent lets one statement travel to other chats
    asked.get_by_role("button", name="Use in other chats").click()
    expect(page.get_by_role("status")).to_contain_text("may now be used in your other chats")
    expect(asked).to_contain_text("used in your other chats")
    expect(asked.get_by_role("button", name="Use in other chats")).to_have_count(0)
    assert {f.status for f in alice.entities.get(alice.entities.search("Ana")[0].id).facts} == {
        "confirmed",
        "proposed",
    }

    # keep one statement as a memory: an explicit act, and it shows among the memories
    moved = facts.filter(has_text="moved to Porto")
    moved.get_by_role("button", name="Keep as memory").click()
    expect(page.get_by_role("status")).to_have_text("Kept as a memory.")
    expect(page.locator("#memory-list")).to_contain_text("My sister Ana Lopez moved to Porto")
    (kept,) = alice.memories.list(status="confirmed")
    assert kept.text == "My sister Ana Lopez moved to Porto last spring."

    # delete one: it goes, with what was noted about it; the messages stay
    def named(name: str) -> Locator:
        return page.locator("#entity-list > li").filter(
            has=page.locator(".entity-name", has_text=re.compile(f"^{re.escape(name)}$"))
        )

    expect(named("<img src=x onerror=alert(1)>")).to_have_count(1)  # a quoted title, as text
    named("Porto").get_by_role("button", name="Delete").click()
    expect(page.get_by_role("status")).to_contain_text("your messages are unchanged")
    expect(named("Porto")).to_have_count(0)
    assert "Porto" not in [e.name for e in alice.entities.list()]
    assert len(conv.messages()) == messages_before
    page.reload()
    expect(named("Ana Lopez")).to_have_count(1)
    expect(named("Porto")).to_have_count(0)
    shot(page, "31-entity-deleted")


def test_an_entitys_statements_are_shown_a_page_at_a_time(
    page: Page, live_server: str, memory: convmem.Memory
) -> None:
    token = memory.keys.create("acme", "user", user="alice").token
    conv = memory.scope("acme", "alice").create_conversation(title="Porto days")
    for n in range(45):
        conv.append("user", f"Day {n}: Porto was sunny and we walked {n} km.")
    sign_in(page, live_server, token)
    porto = page.locator("#entity-list > li").filter(
        has=page.locator(".entity-name", has_text=re.compile("^Porto$"))
    )
    porto.get_by_text(re.compile("What was said about it")).click()
    facts = porto.locator(".fact")
    expect(facts).to_have_count(20)
    more = porto.get_by_role("button", name="Show more statements")
    more.click()
    expect(facts).to_have_count(40)
    expect(facts.nth(20).get_by_role("button").first).to_be_focused()
    more.click()
    expect(facts).to_have_count(45)
    expect(more).to_be_hidden()


def test_an_edit_that_replaces_another_memory_shows_both_asks_first_and_undoes(
    page: Page, live_server: str, memory: convmem.Memory
) -> None:
    token = memory.keys.create("acme", "user", user="alice").token
    alice = memory.scope("acme", "alice")
    aisle = alice.remember("I prefer aisle seats on long flights").memory
    assert aisle is not None
    alice.propose("I like window seats", category="preference")
    sign_in(page, live_server, token)
    items = page.locator("#memory-list > li")
    expect(items).to_have_count(2)
    suggestion = items.filter(has_text="I like window seats")

    # editing the suggestion would replace the aisle memory: both texts, and a question first
    suggestion.get_by_role("button", name="Edit").click()
    page.get_by_label("Edit this memory").fill("I like window seats on short flights")
    page.get_by_role("button", name="Save").click()
    dialog = page.get_by_role("dialog", name="Replace another memory?")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("“I like window seats on short flights”")
    expect(dialog).to_contain_text("“I prefer aisle seats on long flights”")
    shot(page, "40-replace-asks-first")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    # nothing changed
    assert {m.text for m in alice.memories.list()} == {
        "I prefer aisle seats on long flights",
        "I like window seats",
    }
    expect(page.get_by_label("Edit this memory")).to_be_focused()

    page.get_by_role("button", name="Save").click()
    dialog.get_by_role("button", name="Replace it").click()
    expect(page.get_by_role("status")).to_have_text("Memory updated; it replaced another one.")
    undo = page.get_by_role("region", name="Undo the last change")
    expect(undo).to_contain_text("“I prefer aisle seats on long flights”")
    assert [m.text for m in alice.memories.list()] == ["I like window seats on short flights"]

    # undo is one click: the aisle memory is back, the new one gone
    undo.get_by_role("button", name="Undo").click()
    expect(page.get_by_role("status")).to_contain_text("is back")
    expect(undo).to_be_hidden()
    assert [m.text for m in alice.memories.list()] == ["I prefer aisle seats on long flights"]
    expect(items.filter(has_text="I prefer aisle seats on long flights")).to_have_count(1)


def test_confirming_a_suggestion_that_replaces_a_memory_asks_first_and_undoes(
    page: Page, live_server: str, memory: convmem.Memory
) -> None:
    token = memory.keys.create("acme", "user", user="alice").token
    alice = memory.scope("acme", "alice")
    alice.remember("I prefer aisle seats on long flights")
    alice.propose("I like window seats on short flights", category="preference")
    sign_in(page, live_server, token)
    suggestion = page.locator("#memory-list > li").filter(has_text="window seats")
    suggestion.get_by_role("button", name="Confirm").click()
    dialog = page.get_by_role("dialog", name="Replace another memory?")
    expect(dialog).to_contain_text("“I prefer aisle seats on long flights”")
    dialog.get_by_role("button", name="Cancel").click()
    assert {m.status for m in alice.memories.list()} == {"confirmed", "proposed"}
    suggestion.get_by_role("button", name="Confirm").click()
    dialog.get_by_role("button", name="Replace it").click()
    expect(page.get_by_role("status")).to_have_text("Memory confirmed; it replaced another one.")
    assert [m.text for m in alice.memories.list()] == ["I like window seats on short flights"]
    undo = page.get_by_role("region", name="Undo the last change")
    undo.get_by_role("button", name="Undo").click()
    expect(page.get_by_role("status")).to_contain_text("is back")
    # the state before the confirmation: the memory back, the suggestion a suggestion again
    assert {(m.text, m.status) for m in alice.memories.list()} == {
        ("I prefer aisle seats on long flights", "confirmed"),
        ("I like window seats on short flights", "proposed"),
    }
    expect(suggestion.get_by_role("button", name="Confirm")).to_be_visible()


# --- how end users reach their page: a sign-in link from the application -----------------------


def test_an_application_sends_its_user_in_with_a_single_use_link(
    page: Page, live_server: str, memory: convmem.Memory, tmp_path: Path
) -> None:
    import httpx

    app_key = memory.keys.create("acme", "app", name="the chat app").token
    memory.scope("acme", "alice").remember("I prefer aisle seats.")
    memory.scope("acme", "bob").remember("I live in Porto.")
    # the application, over HTTP with its app key, for one of its users
    as_app = {"Authorization": f"Bearer {app_key}", "X-Convmem-User": "alice"}
    minted = httpx.post(f"{live_server}/v1/page-sessions", headers=as_app)
    assert minted.status_code == 201, minted.text
    link = minted.json()["url"]

    page.goto(link)
    heading = page.get_by_role("heading", name="What convmem remembers about you")
    expect(heading).to_be_visible()
    expect(page.locator("#who-name")).to_have_text("alice (acme)")
    expect(page.locator("#memory-list")).to_contain_text("I prefer aisle seats.")
    expect(page.locator("#memory-list")).not_to_contain_text("Porto")
    assert "sign-in" not in page.url  # the token left the address bar
    # the page's script holds no credential: the cookie is HttpOnly, nothing in storage
    assert page.evaluate("document.cookie") == ""
    stored = page.evaluate("JSON.stringify(sessionStorage)")
    assert "cmk_" not in stored and "cmp_" not in stored
    (cookie,) = page.context.cookies()
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    shot(page, "50-signed-in-by-link")
    # a reload (or a new tab) stays signed in through the cookie
    page.reload()
    expect(page.locator("#memory-list")).to_contain_text("I prefer aisle seats.")

    # the same link again, in a fresh browser context: refused, with a clear page
    other = page.context.browser.new_context()  # type: ignore[union-attr]
    try:
        second = other.new_page()
        second.goto(link)
        expect(
            second.get_by_role("heading", name="This sign-in link can't be used")
        ).to_be_visible()
        expect(second.get_by_text("a link works once")).to_be_visible()
        second.screenshot(path=str(tmp_path / "51-link-reused.png"), full_page=True)
        shot(second, "51-link-reused")
    finally:
        other.close()

    # sign out: the session ends; a reload shows the sign-in form, not alice's memories
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    page.reload()
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    expect(page.locator("#memory-list")).not_to_contain_text("aisle")


def test_the_page_marks_sensitive_memories_and_says_why_each_suggestion_was_made(
    page: Page, live_server: str, memory: convmem.Memory
) -> None:
    """Issue 36: a memory of a special category the user asked to keep is marked sensitive; a
    suggestion shows its confidence, why it was made and the turns it came from."""
    memory.set_tenant_policy("acme", sensitive_categories=["health"])
    token = memory.keys.create("acme", "user", user="alice").token
    alice = memory.scope("acme", "alice")
    alice.remember("I am allergic to peanuts.")
    said = alice.create_conversation().append("user", "I prefer window seats.")
    alice.propose("Travels to Lisbon often", confidence=0.9)
    page.goto(live_server)
    page.get_by_label("API key").fill(token)
    page.get_by_label("API key").press("Enter")
    items = page.locator("#memory-list > li")
    expect(items).to_have_count(3)
    allergy = items.filter(has_text="I am allergic to peanuts.")
    expect(allergy.locator(".sensitive-mark")).to_contain_text("Sensitive")
    expect(allergy.locator(".sensitive-mark")).to_contain_text("health")
    seats = items.filter(has_text="I prefer window seats.")
    expect(seats).to_contain_text("You said it in a message")
    expect(seats).to_contain_text("Confidence")
    expect(seats).to_contain_text("60%")
    link = seats.get_by_role("link", name="the message it came from")
    assert link.get_attribute("href") == f"#/messages/{said.id}"
    lisbon = items.filter(has_text="Travels to Lisbon often")
    expect(lisbon).to_contain_text("Your application suggested it")
    expect(lisbon).to_contain_text("90%")
    expect(seats.locator(".sensitive-mark")).to_have_count(0)
    shot(page, "40-sensitive-and-why-suggested")
