// The conversation view: one branch of the message tree as a flat list, root to leaf. Sibling
// versions (edits, regenerations) are collapsed into a "version 2 of 3" switcher at the fork; the
// marks say what the last assembled request did with each message. Viewing another version
// changes nothing on the server: the application's active branch stays what it was.

import { ApiError, api, excerpt, fail, formatDate, h, showView } from "./app.js";

const $ = (id) => document.getElementById(id);

// readable names for the report's sections (the key stays visible for developers)
const SECTION_NAMES = {
  tools: "Tool definitions",
  system: "System prompt",
  pinned: "Pinned instructions",
  memories: "Memories",
  summary: "Summary of older messages",
  history: "Recent messages, verbatim",
  relevant_memories: "Memories relevant to the new message",
  retrieved: "Older messages brought back",
  user: "The new message",
};

const MARKS = {
  included: ["in the request", "Sent verbatim in the last request."],
  stubbed: ["stubbed", "A tool result too large for the budget: the request held a short stub instead."],
  media_stubbed: ["image stubbed", "An older image or file: the request named it in a short stub instead."],
  retrieved: ["retrieved", "Evicted, then brought back as relevant to the new message."],
  summarised: ["summarised", "Evicted; the request's summary covers it."],
  evicted: ["evicted", "Left out of the last request."],
};

const FULL_TEXT_OVER = 200; // longer messages show an excerpt and open on demand

let state = null; // { id, messages, byId, children, activeLeaf, assembly, shown }

export async function loadConversations() {
  showView("conversations-view");
  try {
    const conversations = await api("GET", "/v1/conversations?limit=200");
    $("conversation-list").replaceChildren(...conversations.map((c) => h("li", {},
      h("a", { href: `#/conversations/${encodeURIComponent(c.id)}` }, c.title || "Untitled conversation"),
      " ", h("span", { class: "hint" }, `started ${formatDate(c.created_at)}`, c.temporary ? " · temporary" : ""),
    )));
    $("conversations-empty").hidden = conversations.length > 0;
  } catch (e) { fail(e); }
}

export async function loadConversation(conversationId, highlight) {
  showView("conversation-view", !highlight);
  $("tree").replaceChildren();
  $("last-assembly").replaceChildren();
  try {
    const path = `/v1/conversations/${encodeURIComponent(conversationId)}`;
    const [record, messages] = await Promise.all([api("GET", path), api("GET", `${path}/messages`)]);
    let assembly = null;
    try { assembly = await api("GET", `${path}/last-assembly`); } catch (e) {
      if (!(e instanceof ApiError && e.status === 404)) throw e;
    }
    $("conversation-title").textContent = record.title || "Untitled conversation";
    state = indexTree(conversationId, messages, record.active_leaf_id, assembly);
    renderBranch(highlight || record.active_leaf_id);
    renderAssembly(assembly, new Set(messages.map((m) => m.id)));
    if (highlight) {
      const target = document.getElementById(`node-${highlight}`);
      if (target) { target.scrollIntoView({ block: "center" }); target.focus(); }
    }
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) {
      $("conversation-title").textContent = "Conversation not found";
      $("conversation-title").focus();
    }
    fail(e);
  }
}

function indexTree(id, messages, activeLeaf, assembly) {
  const byId = new Map(messages.map((m) => [m.id, m]));
  const children = new Map(); // parent id ("" for roots) -> children, oldest first
  for (const m of messages) {
    const key = m.parent_id || "";
    if (!children.has(key)) children.set(key, []);
    children.get(key).push(m);
  }
  return { id, messages, byId, children, activeLeaf, marks: marksOf(assembly, byId) };
}

// What the last request did with each message, by id. The report lists what it included,
// stubbed and brought back; everything else on the branch it was built for (the ancestors of
// its newest included message) was evicted, into the summary when the summary runs through it.
function marksOf(assembly, byId) {
  const marks = new Map();
  if (!assembly) return marks;
  const r = assembly.report;
  const add = (id, mark) => marks.set(id, [...(marks.get(id) || []), mark]);
  const included = new Set(r.included_ids);
  const stubbed = new Set(r.stubbed_ids);
  const mediaStubbed = new Set(r.media_stubbed_ids || []);
  const retrieved = new Set(r.retrieved_ids || []);
  const summarised = new Set();
  for (let id = r.summary_through_id; id; id = byId.get(id)?.parent_id) summarised.add(id);
  const newest = r.included_ids.filter((id) => byId.has(id))
    .reduce((a, b) => (byId.get(b).depth > (a ? byId.get(a).depth : -1) ? b : a), null);
  for (let id = newest; id; id = byId.get(id)?.parent_id) {
    if (included.has(id)) {
      add(id, stubbed.has(id) ? "stubbed" : "included");
      if (mediaStubbed.has(id)) add(id, "media_stubbed");
      continue;
    }
    if (summarised.has(id)) add(id, "summarised");
    if (retrieved.has(id)) add(id, "retrieved");
    if (!summarised.has(id) && !retrieved.has(id)) add(id, "evicted");
  }
  return marks;
}

// The path shown: root to `target`, then on to a leaf (the active one when it lies below,
// otherwise the newest child at each step).
function pathThrough(target) {
  const { byId, children, activeLeaf } = state;
  const up = [];
  for (let id = target; id; id = byId.get(id)?.parent_id) up.unshift(id);
  const active = new Set();
  for (let id = activeLeaf; id; id = byId.get(id)?.parent_id) active.add(id);
  const path = up.filter((id) => byId.has(id));
  for (let last = path[path.length - 1]; last;) {
    const kids = children.get(last) || [];
    if (!kids.length) break;
    const next = kids.find((k) => active.has(k.id)) || kids[kids.length - 1];
    path.push(next.id);
    last = next.id;
  }
  return { path, active };
}

function renderBranch(target) {
  if (!state.messages.length) { $("tree").replaceChildren(h("p", { class: "empty" }, "No messages yet.")); return; }
  const { path, active } = pathThrough(target || state.activeLeaf);
  const onActive = path.every((id) => active.has(id)) && path[path.length - 1] === state.activeLeaf;
  const banner = onActive
    ? h("p", { class: "branch-note" }, `The active branch: ${path.length} messages, oldest first.`)
    : h("p", { class: "branch-note other" },
      "You are looking at another version, not the active branch. ",
      h("button", { type: "button", onclick: () => { renderBranch(state.activeLeaf); focusNode(state.activeLeaf); } }, "Back to the active branch"));
  $("tree").replaceChildren(
    banner,
    legend(),
    h("ol", { class: "branch" }, path.map((id) => messageItem(state.byId.get(id), active))),
  );
}

function legend() {
  if (!state.marks.size) return null;
  return h("details", { class: "legend" }, h("summary", {}, "What the marks mean"),
    h("dl", {}, Object.values(MARKS).map(([name, meaning]) =>
      h("div", {}, h("dt", {}, h("span", { class: "mark" }, name)), h("dd", {}, meaning)))));
}

function messageItem(m, active) {
  const siblings = state.children.get(m.parent_id || "") || [m];
  const fork = siblings.length > 1;
  const marks = state.marks.get(m.id) || [];
  const calls = m.tool_calls.length ? `calls ${m.tool_calls.map((c) => c.name).join(", ")}` : "";
  const text = m.content || calls || "(empty)";
  const long = text.length > FULL_TEXT_OVER;
  return h("li", { class: `message-item role-${m.role}${fork ? " fork" : ""}${active.has(m.id) ? "" : " inactive"}` },
    fork ? versionSwitcher(m, siblings) : null,
    h("div", {
      id: `node-${m.id}`, class: "message", tabindex: "-1",
    },
      h("p", { class: "message-head" },
        h("span", { class: `role role-${m.role}` }, m.role),
        marks.map((mark) => h("span", { class: `mark mark-${mark}`, title: MARKS[mark][1] }, MARKS[mark][0])),
        h("time", { class: "hint", datetime: m.created_at }, formatDate(m.created_at)),
      ),
      m.parts
        ? partsView(m.parts)
        : long
          ? h("details", { class: "content" }, h("summary", {}, excerpt(text, FULL_TEXT_OVER)), h("p", {}, text))
          : h("p", { class: "content" }, text),
      m.content && calls ? h("p", { class: "hint" }, calls) : null,
    ),
  );
}

// Content parts: text as text, an image as a thumbnail loaded from the application's own https
// URL (never from convmem, never inline bytes), anything else as a chip naming it. Every caller
// string goes in as text (h() never parses HTML), so a caption cannot add markup.
function partsView(parts) {
  return h("div", { class: "parts" }, parts.map((part) => {
    if (part.type === "text") return h("p", { class: "content" }, part.text);
    if (part.type === "image" && /^https:\/\//i.test(part.url || "")) {
      return h("figure", { class: "thumb" },
        h("img", {
          src: part.url, alt: part.caption || part.name || "image", loading: "lazy",
          referrerpolicy: "no-referrer", width: Math.min(part.width, 240),
        }),
        h("figcaption", { class: "hint" }, mediaLabel(part), part.caption ? ` · ${part.caption}` : ""));
    }
    return h("span", { class: `chip chip-${part.type}`, title: part.caption || part.extracted_text?.slice(0, 200) || "" },
      mediaLabel(part));
  }));
}

function mediaLabel(part) {
  if (part.type === "image") return `${part.name || "image"}, ${part.width}\u00d7${part.height}`;
  if (part.type === "file") return `${part.name}${part.page_count ? `, ${part.page_count} pages` : ""}`;
  return part.name || part.type;
}

function versionSwitcher(m, siblings) {
  const index = siblings.findIndex((s) => s.id === m.id);
  const show = (other) => { renderBranch(other.id); focusSwitcher(other.id); };
  return h("div", { class: "versions", role: "group", "aria-label": `Versions of this ${m.role} message` },
    h("button", {
      type: "button", class: "prev", disabled: index === 0, "aria-label": "Previous version",
      onclick: () => show(siblings[index - 1]),
    }, "‹"),
    h("span", { class: "version-label", id: `versions-${m.id}`, "aria-live": "polite" }, `version ${index + 1} of ${siblings.length}`),
    h("button", {
      type: "button", class: "next", disabled: index === siblings.length - 1, "aria-label": "Next version",
      onclick: () => show(siblings[index + 1]),
    }, "›"),
  );
}

function focusSwitcher(id) {
  const label = document.getElementById(`versions-${id}`);
  const button = label && label.parentElement.querySelector("button:not([disabled])");
  if (button) button.focus();
}

function focusNode(id) {
  const node = document.getElementById(`node-${id}`);
  if (node) { node.scrollIntoView({ block: "center" }); node.focus(); }
}

function renderAssembly(record, existing) {
  const box = $("last-assembly");
  if (!record) {
    box.replaceChildren(h("p", { class: "empty" }, "No request has been assembled for this conversation yet."));
    return;
  }
  const r = record.report;
  const table = h("table", {},
    h("caption", {}, `Tokens per section, ${r.format} format, ${r.tokenizer} tokenizer`),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Section"), h("th", { scope: "col", class: "num" }, "Tokens"))),
    h("tbody", {}, Object.entries(r.sections).map(([name, tokens]) =>
      h("tr", {}, h("th", { scope: "row" }, SECTION_NAMES[name] || name, " ", h("code", { class: "hint" }, name)),
        h("td", { class: "num" }, String(tokens))))),
    h("tfoot", {}, h("tr", {}, h("th", { scope: "row" }, "Total"), h("td", { class: "num" }, String(r.total_tokens)))),
  );
  const gone = r.included_ids.filter((id) => !existing.has(id)).length;
  const facts = h("dl", { class: "meta facts" },
    h("div", {}, h("dt", {}, "Assembled"), h("dd", {}, h("time", { datetime: record.at }, formatDate(record.at)))),
    h("div", {}, h("dt", {}, "Context window"), h("dd", {}, `${r.context_window} (output reserved: ${r.max_output})`)),
    h("div", {}, h("dt", {}, "Input budget"), h("dd", {}, `${r.input_budget} (history: ${r.history_budget})`)),
    h("div", {}, h("dt", {}, "Messages included"), h("dd", {}, `${r.included_ids.length}${gone ? ` (${gone} since deleted)` : ""}`)),
    h("div", {}, h("dt", {}, "Evicted"), h("dd", {}, String(r.evicted_count))),
    h("div", {}, h("dt", {}, "Brought back"), h("dd", {}, String((r.retrieved_ids || []).length))),
    h("div", {}, h("dt", {}, "Tool results stubbed"), h("dd", {}, String(r.stubbed_ids.length))),
    h("div", {}, h("dt", {}, "Memories used"), h("dd", {}, String(r.memory_ids.length))),
    r.summary_id ? h("div", {}, h("dt", {}, "Summary"), h("dd", {}, r.summary_id)) : null,
  );
  box.replaceChildren(table, facts);
}

export async function openMessage(messageId) {
  try {
    const message = await api("GET", `/v1/messages/${encodeURIComponent(messageId)}`);
    location.replace(`#/conversations/${encodeURIComponent(message.conversation_id)}/m/${encodeURIComponent(message.id)}`);
  } catch (e) {
    showView("conversation-view");
    $("tree").replaceChildren();
    $("last-assembly").replaceChildren();
    $("conversation-title").textContent = "That message no longer exists";
    $("conversation-title").focus();
    if (!(e instanceof ApiError && e.status === 404)) fail(e);
  }
}
