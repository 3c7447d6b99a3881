// The memory page: plain ES module, no build step. It calls the same /v1 API as any client,
// with the key the user signs in with. Text from the server is only ever set as textContent.

import { loadConversation, loadConversations, openMessage } from "./conversation.js";
import { loadEntities } from "./entities.js";

const SESSION = "convmem.session";
const $ = (id) => document.getElementById(id);

// --- small helpers ---------------------------------------------------------------------------

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else if (name === "text") el.textContent = value;
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  el.append(...nodes(children));
  return el;
}

// Children as nodes: nested lists flattened; null, undefined and false left out (an absent
// optional piece, never the text "null"); anything else as text, never parsed as HTML.
function nodes(children) {
  return children.flat(Infinity)
    .filter((child) => child !== null && child !== undefined && child !== false)
    .map((child) => (child instanceof Node ? child : document.createTextNode(String(child))));
}

// What every view uses instead of replaceChildren: the same rules as h() for what it is given.
export function fill(parent, ...children) {
  parent.replaceChildren(...nodes(children));
  return parent;
}

export function say(text) {
  const status = $("status");
  status.textContent = "";
  // set after a tick so screen readers announce a repeated message too; cleared after a while
  window.setTimeout(() => { status.textContent = text; }, 30);
  window.clearTimeout(say.timer);
  say.timer = window.setTimeout(() => { status.textContent = ""; }, 8000);
}

export function formatDate(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  return date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

export function excerpt(text, size = 160) {
  const flat = (text || "").replace(/\s+/g, " ").trim();
  return flat.length > size ? flat.slice(0, size - 1) + "…" : flat;
}

// --- the session and the API -----------------------------------------------------------------

function session() {
  try { return JSON.parse(sessionStorage.getItem(SESSION) || "null"); } catch { return null; }
}

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || `request failed (${status})`);
    this.status = status;
    this.code = problem.code;
  }
}

// A header value is ASCII: a user id outside it goes percent-encoded as UTF-8 (the service
// decodes it; raw non-ASCII would be refused, and fetch cannot send it anyway).
export function userHeader(user) {
  return encodeURIComponent(user);
}

export async function api(method, path, body) {
  const current = session();
  const headers = { Accept: "application/json" };
  // a page session's cookie is sent by the browser itself (HttpOnly: this script never sees it)
  if (current && !current.cookie) {
    headers.Authorization = `Bearer ${current.key}`;
    if (current.user && current.role === "app") headers["X-Convmem-User"] = userHeader(current.user);
  }
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 204) return null;
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    if (response.status === 401 && current) {
      signOut(current.cookie
        ? "Your session has ended. Open a new sign-in link from your application."
        : "Your key is no longer valid. Sign in again.");
    }
    throw new ApiError(response.status, data);
  }
  return data;
}

export function fail(error) {
  say(error instanceof ApiError ? `Could not do that: ${error.message}` : "Something went wrong.");
}

async function signIn(event) {
  event.preventDefault();
  const key = $("key").value.trim();
  const user = $("as-user").value.trim();
  const error = $("sign-in-error");
  error.textContent = "";
  if (!key) { error.textContent = "Enter your API key."; $("key").focus(); return; }
  sessionStorage.setItem(SESSION, JSON.stringify({ key, user, role: null }));
  try {
    const me = await api("GET", "/v1/me", undefined);
    if (me.role === "admin") throw new ApiError(403, { detail: "an admin key manages keys; sign in with a user key" });
    if (me.role === "app" && !user) throw new ApiError(400, { detail: "an application key needs the user to act for" });
    sessionStorage.setItem(SESSION, JSON.stringify({ key, user, role: me.role, tenant: me.tenant, who: me.user || user }));
    $("key").value = "";
    $("sign-in-error").textContent = "";
    showChrome();
    route();
  } catch (e) {
    sessionStorage.removeItem(SESSION);
    error.textContent = e instanceof ApiError ? `Sign-in failed: ${e.message}` : "Sign-in failed.";
    $("key").focus();
  }
}

// A sign-in link from the application: its token (single use, short-lived) is exchanged for a
// session cookie; the token leaves the address bar at once.
async function useSignInLink(token) {
  history.replaceState(null, "", `${location.pathname}#/`);
  sessionStorage.removeItem(SESSION);
  try {
    const response = await fetch("/v1/page-sessions/exchange", {
      method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({ token }),
    });
    if (!response.ok) { showChrome(); showView("link-refused-view"); return; }
    const started = await response.json();
    sessionStorage.setItem(SESSION, JSON.stringify({
      cookie: true, role: "user", tenant: started.tenant, who: started.user,
    }));
    showChrome();
    route();
  } catch { showChrome(); showView("link-refused-view"); }
}

// A session cookie from an earlier link (a reload, a new tab): the page asks who it is.
async function resumeCookieSession() {
  const response = await fetch("/v1/me", { headers: { Accept: "application/json" } });
  if (!response.ok) return false;
  const me = await response.json();
  sessionStorage.setItem(SESSION, JSON.stringify({ cookie: true, role: me.role, tenant: me.tenant, who: me.user }));
  return true;
}

async function signOut(message) {
  const current = session();
  sessionStorage.removeItem(SESSION);
  // a page session ends on the server too (its cookie cleared), before the page moves on
  if (current && current.cookie) await fetch("/v1/page-sessions/current", { method: "DELETE" }).catch(() => {});
  drafts.clear();
  $("undo").hidden = true;
  showChrome();
  showView("sign-in-view");
  if (message) $("sign-in-error").textContent = message;
}

function showChrome() {
  const current = session();
  const signedIn = Boolean(current && current.role);
  $("nav").hidden = !signedIn;
  $("who").hidden = !signedIn;
  $("who-name").textContent = signedIn ? `${current.who} (${current.tenant})` : "";
}

export function showView(id, focus = true) {
  for (const view of document.querySelectorAll("main > section")) view.hidden = view.id !== id;
  for (const link of document.querySelectorAll("#nav a")) {
    const here = (link.getAttribute("href") === "#/" && id === "memories-view")
      || (link.getAttribute("href") === "#/conversations" && id.startsWith("conversation"));
    if (here) link.setAttribute("aria-current", "page"); else link.removeAttribute("aria-current");
  }
  if (focus) {
    const title = document.querySelector(`#${id} h1`);
    if (title) title.focus();
  }
}

// --- memories --------------------------------------------------------------------------------

const STATUS_LABEL = {
  confirmed: "Saved", proposed: "Suggested — waiting for you", superseded: "Replaced by a newer one",
  rejected: "Declined",
};
// why a suggestion was made (a proposal's basis), beside the turns it cites
const BASIS_LABEL = {
  statement: "You said it in a message", repeated: "You said it in several conversations",
  model: "A model read it in your messages", application: "Your application suggested it",
};
// the special categories a tenant may let a user keep on their own explicit request
const SENSITIVE_LABEL = {
  health: "health", sensitive_category: "a special category (beliefs, orientation, origin …)",
};
const SOURCE_LABEL = {
  user_explicit: "You asked to remember it", confirmed_inference: "Suggested, then confirmed by you",
  inference: "Suggested, not yet confirmed by you", admin: "Added by an administrator", import: "Imported",
};

async function loadMemories(focusTitle = true) {
  showView("memories-view", focusTitle);
  try {
    const history = $("show-history").checked;
    const query = history ? "?status=confirmed&status=proposed&status=superseded&status=rejected" : "";
    const [settings, memories] = await Promise.all([
      api("GET", "/v1/settings"), api("GET", `/v1/memories${query}`),
    ]);
    renderSettings(settings.memory_enabled);
    renderMemories(memories);
  } catch (e) { fail(e); }
  await loadEntities();
}

function renderSettings(enabled) {
  $("memory-enabled").checked = enabled;
  $("memory-state").textContent = enabled
    ? "On: convmem may save and use memories."
    : "Off: nothing is saved or used until you turn it back on.";
}

// Edits not yet saved, by memory id: a re-render (a save elsewhere, a visit to another page)
// reopens them instead of dropping what was typed.
const drafts = new Map();

function renderMemories(memories) {
  const list = $("memory-list");
  // suggestions first: they wait for the user's decision
  const ordered = [...memories].sort((a, b) => (b.status === "proposed") - (a.status === "proposed"));
  // a superseded memory whose replacement is still current can be put back (undo)
  const restorable = new Set(memories.filter((m) => m.status === "confirmed" && m.supersedes_id)
    .map((m) => m.supersedes_id));
  const texts = new Map(memories.map((m) => [m.id, m.text]));
  fill(list, ordered.map((m) => memoryItem(m, restorable.has(m.id), texts)));
  $("memories-empty").hidden = memories.length > 0;
  for (const memory of ordered) {
    if (!drafts.has(memory.id)) continue;
    const edit = list.querySelector(`li[data-id="${CSS.escape(memory.id)}"] .edit`);
    if (edit) startEdit(memory, edit, drafts.get(memory.id), false);
    else drafts.delete(memory.id);
  }
}

function memoryItem(memory, restorable = false, texts = new Map()) {
  const textId = `text-${memory.id}`;
  const source = memory.source_message_id
    ? h("a", { href: `#/messages/${encodeURIComponent(memory.source_message_id)}` }, "the message it came from")
    : h("span", {}, "added directly, not from a message");
  const actions = h("div", { class: "actions" });
  const current = memory.status === "confirmed" || memory.status === "proposed";
  if (memory.status === "proposed") {
    actions.append(
      h("button", { type: "button", "aria-describedby": textId, onclick: () => decide(memory, "confirm") }, "Confirm"),
      h("button", { type: "button", "aria-describedby": textId, onclick: () => decide(memory, "reject") }, "Reject"),
    );
  }
  if (restorable) {
    actions.append(h("button", {
      type: "button", class: "restore", "aria-describedby": textId, onclick: () => restoreMemory(memory),
    }, "Restore"));
  }
  if (current) {
    actions.append(h("button", {
      type: "button", class: "edit", "aria-describedby": textId,
      onclick: (event) => startEdit(memory, event.currentTarget),
    }, "Edit"));
  }
  actions.append(h("button", {
    type: "button", class: "danger", "aria-describedby": textId, onclick: () => removeMemory(memory),
  }, "Delete"));
  const sensitive = memory.sensitivity && memory.sensitivity !== "none"
    ? memory.sensitivity.split(",").map((c) => SENSITIVE_LABEL[c] || c).join(", ")
    : null;
  const proposed = memory.status === "proposed";
  const cited = proposed ? h("dd", { class: "cited" }, source) : null;
  if (proposed && memory.basis === "repeated") citeEvidence(memory, cited);
  return h("li", { class: `memory status-${memory.status}${sensitive ? " sensitive" : ""}`, "data-id": memory.id },
    sensitive
      ? h("p", { class: "sensitive-mark" }, h("strong", {}, "Sensitive"),
        ` — ${sensitive}: kept only because you asked; used only for what your provider allows.`)
      : null,
    h("p", { class: "memory-text", id: textId }, memory.text),
    h("dl", { class: "meta" },
      h("div", {}, h("dt", {}, "Category"), h("dd", {}, memory.category)),
      h("div", {}, h("dt", {}, "Status"), h("dd", {}, STATUS_LABEL[memory.status] || memory.status)),
      h("div", {}, h("dt", {}, "Saved"), h("dd", {}, h("time", { datetime: memory.created_at }, formatDate(memory.created_at)))),
      memory.updated_at !== memory.created_at
        ? h("div", {}, h("dt", {}, "Changed"), h("dd", {}, h("time", { datetime: memory.updated_at }, formatDate(memory.updated_at))))
        : null,
      h("div", {}, h("dt", {}, "How"), h("dd", {}, SOURCE_LABEL[memory.source_kind] || memory.source_kind)),
      proposed
        ? h("div", {}, h("dt", {}, "Why suggested"), h("dd", {}, BASIS_LABEL[memory.basis] || "Suggested"))
        : null,
      proposed && typeof memory.confidence === "number"
        ? h("div", {}, h("dt", {}, "Confidence"), h("dd", {}, `${Math.round(memory.confidence * 100)}%`))
        : null,
      h("div", {}, h("dt", {}, proposed ? "From" : "Source"), cited || h("dd", {}, source)),
      memory.expires_at
        ? h("div", {}, h("dt", {}, "Expires"), h("dd", {}, h("time", { datetime: memory.expires_at }, formatDate(memory.expires_at))))
        : null,
      memory.conflicts_with_id
        ? h("div", {}, h("dt", {}, "Note"), h("dd", {}, !texts.has(memory.conflicts_with_id)
          ? "Disagrees with another memory"
          : memory.status === "proposed"
            ? `Disagrees with “${texts.get(memory.conflicts_with_id)}” — Confirm replaces it, Reject keeps it`
            : `Disagrees with “${texts.get(memory.conflicts_with_id)}”`))
        : null,
      memory.status === "confirmed" && memory.supersedes_id
        ? h("div", {}, h("dt", {}, "Replaced"), h("dd", {}, texts.has(memory.supersedes_id)
          ? `“${texts.get(memory.supersedes_id)}” — its Restore button undoes the change`
          : "an older memory (show superseded memories to restore it)"))
        : null,
    ),
    actions,
  );
}

// A suggestion repeated across conversations cites each turn that said it: one link per turn.
async function citeEvidence(memory, cell) {
  try {
    const found = await api("GET", `/v1/memories/${encodeURIComponent(memory.id)}/evidence`);
    const ids = found.message_ids.slice(0, 10);
    if (ids.length < 2) return;
    fill(cell, ids.map((id, i) => [i ? ", " : "",
      h("a", { href: `#/messages/${encodeURIComponent(id)}` }, `message ${i + 1}`)]));
  } catch (e) { /* the single source link stays */ }
}

function startEdit(memory, button, draft = null, focus = true) {
  const item = button.closest("li");
  const fieldId = `edit-${memory.id}`;
  const hintId = `edit-hint-${memory.id}`;
  const area = h("textarea", { id: fieldId, rows: 2, maxlength: 1000, required: true, "aria-describedby": hintId });
  area.value = draft ?? memory.text;
  const close = () => { drafts.delete(memory.id); form.remove(); restore(); };
  const form = h("form", { class: "edit-form" },
    h("label", { for: fieldId }, "Edit this memory"),
    area,
    h("p", { id: hintId, class: "hint" }, "Enter saves; Shift+Enter starts a new line; Escape cancels."),
    h("div", { class: "actions" },
      h("button", { type: "submit" }, "Save"),
      h("button", { type: "button", onclick: close }, "Cancel"),
    ),
  );
  area.addEventListener("input", () => {
    if (area.value !== memory.text) drafts.set(memory.id, area.value); else drafts.delete(memory.id);
  });
  area.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  const text = item.querySelector(".memory-text");
  const actions = item.querySelector(".actions");
  function restore() {
    text.hidden = false;
    item.append(actions);
    actions.querySelector(".edit").focus();
  }
  form.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    event.preventDefault();
    // Escape is easy to hit by accident: changed text goes only when the user says so
    if (!drafts.has(memory.id) || window.confirm("Discard your changes to this memory?")) close();
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const value = area.value.trim();
    if (!value) { say("A memory needs some text."); area.focus(); return; }
    try {
      const rivals = await replacedBy(memory, value);
      if (rivals.length && !(await askReplace(value, rivals))) { area.focus(); return; }
      const notice = await api("PATCH", `/v1/memories/${encodeURIComponent(memory.id)}`, { text: value });
      drafts.delete(memory.id);
      const others = notice.superseded.filter((old) => old.id !== memory.id);
      say(others.length ? "Memory updated; it replaced another one." : "Memory updated.");
      // undo puts back everything the edit replaced: the edited text and any other memory
      if (notice.memory && notice.memory.id !== memory.id) {
        offerUndo(notice.memory.id, others.length
          ? `Updated; it replaced “${others.map((m) => m.text).join("”, “")}”.` : "Updated.");
      }
      await loadMemories(false);
      const updated = [...document.querySelectorAll("#memory-list .memory-text")].find((p) => p.textContent === value);
      (updated ? updated.closest("li").querySelector("button") : $("memories-title")).focus();
    } catch (e) { fail(e); area.focus(); }
  });
  text.hidden = true;
  actions.remove();
  item.append(form);
  if (focus) area.focus();
}

async function removeMemory(memory) {
  try {
    await api("DELETE", `/v1/memories/${encodeURIComponent(memory.id)}`);
    say("Memory deleted.");
    await loadMemories(false);
    $("memories-title").focus();
  } catch (e) { fail(e); }
}

async function restoreMemory(memory) {
  try {
    await api("POST", `/v1/memories/${encodeURIComponent(memory.id)}/restore`);
    say("Memory restored; the one that replaced it is deleted.");
    await loadMemories(false);
    $("memories-title").focus();
  } catch (e) { fail(e); }
}

// The current memories a change to ``memory`` would replace — confirming it (no text) or
// editing it to ``text`` — as the engine decides it (asked, never guessed here).
async function replacedBy(memory, text) {
  return api("POST", `/v1/memories/${encodeURIComponent(memory.id)}/replaces`,
    text === undefined ? {} : { text });
}

// Both texts, and the user's choice: true to go ahead.
function askReplace(newText, rivals) {
  const dialog = $("confirm-replace");
  fill($("replace-new"), `“${newText}”`);
  fill($("replace-old"), rivals.map((m) => h("li", {}, `“${m.text}”`)));
  dialog.returnValue = "";
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "replace"), { once: true });
  });
}

// One click undoes the change that made ``memoryId`` current: what it replaced comes back,
// a confirmed suggestion is a suggestion again, a saved or edited text goes.
function offerUndo(memoryId, text) {
  const bar = $("undo");
  fill($("undo-text"), text);
  bar.hidden = false;
  $("undo-button").onclick = async () => {
    try {
      const undone = await api("POST", `/v1/memories/${encodeURIComponent(memoryId)}/undo`);
      bar.hidden = true;
      const back = undone.restored.map((m) => `“${m.text}”`).join(", ");
      say(back ? `Undone: ${back} ${undone.restored.length > 1 ? "are" : "is"} back.` : "Undone.");
      await loadMemories(false);
      $("memories-title").focus();
    } catch (e) { fail(e); }
  };
}

async function decide(memory, action) {
  try {
    const rivals = action === "confirm" ? await replacedBy(memory) : [];
    if (rivals.length && !(await askReplace(memory.text, rivals))) return;
    await api("POST", `/v1/memories/${encodeURIComponent(memory.id)}/${action}`);
    if (action === "confirm") {
      offerUndo(memory.id, rivals.length
        ? `Confirmed; it replaced “${rivals.map((m) => m.text).join("”, “")}”.` : "Confirmed.");
    }
    say(action === "confirm" ? (rivals.length ? "Memory confirmed; it replaced another one." : "Memory confirmed.") : "Suggestion declined.");
    await loadMemories(false);
    $("memories-title").focus();
  } catch (e) { fail(e); }
}

async function toggleMemory() {
  const enabled = $("memory-enabled").checked;
  try {
    const settings = await api("PUT", "/v1/settings", { memory_enabled: enabled });
    renderSettings(settings.memory_enabled);
    say(settings.memory_enabled ? "Memory is on." : "Memory is off.");
  } catch (e) { $("memory-enabled").checked = !enabled; fail(e); }
}

async function downloadExport() {
  try {
    const current = session();
    const response = await fetch("/v1/export", {
      headers: current.cookie ? {} : {
        Authorization: `Bearer ${current.key}`,
        ...(current.role === "app" ? { "X-Convmem-User": userHeader(current.user) } : {}),
      },
    });
    if (!response.ok) throw new ApiError(response.status, await response.json().catch(() => ({})));
    const blob = await response.blob();
    const url = URL.createObjectURL(blob);
    const link = h("a", { href: url, download: `convmem-export-${current.who}.json`, hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    window.setTimeout(() => URL.revokeObjectURL(url), 10_000);
    say("Your data was downloaded.");
  } catch (e) { fail(e); }
}

function askDeleteEverything() {
  const dialog = $("confirm-delete-all");
  dialog.returnValue = "";
  dialog.showModal();
}

async function onDialogClose() {
  const dialog = $("confirm-delete-all");
  if (dialog.returnValue !== "confirm") { $("delete-everything").focus(); return; }
  try {
    await api("DELETE", "/v1/data");
    say("Everything was deleted.");
    await loadMemories(false);
    $("memories-title").focus();
  } catch (e) { fail(e); }
}

// --- routing ---------------------------------------------------------------------------------

async function route() {
  const link = location.hash.match(/^#\/sign-in\/(.+)$/);
  if (link) { await useSignInLink(decodeURIComponent(link[1])); return; }
  let current = session();
  if ((!current || !current.role) && await resumeCookieSession().catch(() => false)) {
    current = session();
    showChrome();
  }
  if (!current || !current.role) { showChrome(); showView("sign-in-view"); return; }
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  if (parts[0] === "conversations" && parts[1]) loadConversation(parts[1], parts[2] === "m" ? parts[3] : null);
  else if (parts[0] === "conversations") loadConversations();
  else if (parts[0] === "messages" && parts[1]) openMessage(parts[1]);
  else loadMemories();
}

document.addEventListener("DOMContentLoaded", () => {
  $("sign-in-form").addEventListener("submit", signIn);
  $("sign-out").addEventListener("click", () => signOut("You are signed out."));
  $("memory-enabled").addEventListener("change", toggleMemory);
  $("show-history").addEventListener("change", () => loadMemories(false));
  $("download-export").addEventListener("click", downloadExport);
  $("delete-everything").addEventListener("click", askDeleteEverything);
  $("confirm-delete-all").addEventListener("close", onDialogClose);
  document.addEventListener("convmem:memories-changed", () => loadMemories(false));
  window.addEventListener("hashchange", route);
  // leaving or reloading the page would lose an edit not yet saved: the browser asks first
  window.addEventListener("beforeunload", (event) => { if (drafts.size) event.preventDefault(); });
  showChrome();
  route();
});
