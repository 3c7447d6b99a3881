// The conversation view: one branch of the message tree as a flat list, root to leaf. Sibling
// versions (edits, regenerations) are collapsed into a "version 2 of 3" switcher at the fork; the
// marks say what the last assembled request did with each message. Viewing another version
// changes nothing on the server: the application's active branch stays what it was.

import { ApiError, api, excerpt, fail, fill, formatDate, h, showView } from "./app.js";

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
  entity_facts: "What was said about people and things",
  retrieved: "Older messages brought back",
  user: "The new message",
};

// a section this page does not know yet still reads as words, not as a key
function sectionName(key) {
  if (SECTION_NAMES[key]) return SECTION_NAMES[key];
  const words = key.replace(/[_-]+/g, " ").trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

const MARKS = {
  included: ["in the request", "Sent verbatim in the last request."],
  stubbed: ["stubbed", "A tool result too large for the budget: the request held a short stub instead."],
  media_stubbed: ["image stubbed", "An older image or file: the request named it in a short stub instead."],
  retrieved: ["retrieved", "Evicted, then brought back as relevant to the new message."],
  summarised: ["summarised", "Evicted; the request's summary covers it."],
  evicted: ["evicted", "Left out of the last request."],
};

const FULL_TEXT_OVER = 200; // longer messages show an excerpt and open on demand
const PAGE = 30; // messages loaded at a time: a conversation of any length opens at its newest
const CONVERSATIONS_PAGE = 50;

// { id, items (a contiguous run of one branch ending at its leaf, oldest first, each with its
// version of versions), byId, activeLeaf, otherFrom (null on the active branch, else the depth
// from which the shown branch is another version), marks, assembly }
let state = null;

export async function loadConversations() {
  showView("conversations-view");
  fill($("conversation-list"));
  $("conversations-more").hidden = true;
  await moreConversations(0);
}

async function moreConversations(offset) {
  try {
    // one more than a page: whether another page follows, without counting them all
    const found = await api("GET", `/v1/conversations?limit=${CONVERSATIONS_PAGE + 1}&offset=${offset}`);
    const shown = found.slice(0, CONVERSATIONS_PAGE);
    const items = shown.map((c) => h("li", {},
      h("a", { href: `#/conversations/${encodeURIComponent(c.id)}` }, c.title || "Untitled conversation"),
      " ", h("span", { class: "hint" }, `started ${formatDate(c.created_at)}`, c.temporary ? " · temporary" : ""),
    ));
    $("conversation-list").append(...items);
    $("conversations-empty").hidden = offset + shown.length > 0;
    const more = $("conversations-more");
    more.hidden = found.length <= CONVERSATIONS_PAGE;
    more.onclick = async () => {
      await moreConversations(offset + CONVERSATIONS_PAGE);
      const next = $("conversation-list").children[offset + CONVERSATIONS_PAGE];
      if (next) next.querySelector("a").focus();
    };
    if (offset > 0 && more.hidden && items.length) items[0].querySelector("a").focus();
  } catch (e) { fail(e); }
}

function branchPath(query) {
  return `/v1/conversations/${encodeURIComponent(state.id)}/branch?limit=${PAGE}&${query}`;
}

export async function loadConversation(conversationId, highlight) {
  showView("conversation-view", !highlight);
  fill($("tree"));
  fill($("last-assembly"));
  try {
    const path = `/v1/conversations/${encodeURIComponent(conversationId)}`;
    const record = await api("GET", path);
    let assembly = null;
    try { assembly = await api("GET", `${path}/last-assembly`); } catch (e) {
      if (!(e instanceof ApiError && e.status === 404)) throw e;
    }
    $("conversation-title").textContent = record.title || "Untitled conversation";
    state = { id: conversationId, items: [], byId: new Map(), activeLeaf: record.active_leaf_id,
      otherFrom: null, marks: new Map(), assembly };
    if (highlight) await showThrough(highlight);
    else await showActive();
    renderAssembly(assembly);
    if (highlight) focusNode(highlight);
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) {
      $("conversation-title").textContent = "Conversation not found";
      $("conversation-title").focus();
    }
    fail(e);
  }
}

function setItems(items) {
  state.items = items;
  state.byId = new Map(items.map((m) => [m.id, m]));
  state.marks = marksOf(state.assembly, state.byId);
}

async function showActive() {
  setItems(state.activeLeaf ? await api("GET", branchPath("")) : []);
  state.otherFrom = null;
  renderBranch();
}

// The branch through a message (another version, or the message a link points to), loaded
// back far enough to include it.
async function showThrough(id) {
  let items = await api("GET", branchPath(`through=${encodeURIComponent(id)}`));
  while (!items.some((m) => m.id === id) && items.length && items[0].parent_id) {
    items = [...await api("GET", branchPath(`leaf_id=${encodeURIComponent(items[0].parent_id)}`)), ...items];
  }
  setItems(items);
  const leaf = items.length ? items[items.length - 1].id : null;
  const target = state.byId.get(id);
  state.otherFrom = leaf === state.activeLeaf ? null
    : Math.min(state.otherFrom ?? Infinity, target ? target.depth : 0);
  renderBranch();
}

async function showEarlier() {
  const oldest = state.items[0];
  try {
    const earlier = await api("GET", branchPath(`leaf_id=${encodeURIComponent(oldest.parent_id)}`));
    setItems([...earlier, ...state.items]);
    renderBranch();
    if (earlier.length) focusNode(earlier[0].id, "start");
  } catch (e) { fail(e); }
}

// What the last request did with each message, by id. The report lists what it included,
// stubbed and brought back; everything else on the branch it was built for (the ancestors of
// its newest included message) was evicted, into the summary when the summary runs through it.
// The messages loaded are a contiguous run ending at the leaf, so walking up through them
// marks each one the request saw.
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
    if (!byId.has(id)) break;
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

function renderBranch() {
  const { items } = state;
  if (!items.length) { fill($("tree"), h("p", { class: "empty" }, "No messages yet.")); return; }
  const onActive = state.otherFrom === null;
  const oldest = items[0];
  const banner = onActive
    ? h("p", { class: "branch-note" },
      `The active branch: ${oldest.depth + items.length} messages, oldest first`,
      oldest.depth ? `; the newest ${items.length} are shown.` : ".")
    : h("p", { class: "branch-note other" },
      "You are looking at another version, not the active branch. ",
      h("button", { type: "button", onclick: backToActive }, "Back to the active branch"));
  const jumps = h("nav", { class: "jumps", "aria-label": "In this conversation" },
    h("button", { type: "button", onclick: () => focusNode(items[items.length - 1].id) }, "Jump to the latest message"),
    state.assembly ? h("button", { type: "button", onclick: jumpToReport }, "Jump to the last request's report") : null,
  );
  const earlier = oldest.parent_id
    ? h("p", { class: "earlier" }, h("button", { type: "button", class: "show-earlier", onclick: showEarlier },
      `Show earlier messages (${oldest.depth} more)`))
    : null;
  fill($("tree"), banner, jumps, legend(), earlier,
    h("ol", { class: "branch" }, items.map((m) => messageItem(m))));
}

async function backToActive() {
  try {
    await showActive();
    focusNode(state.activeLeaf);
  } catch (e) { fail(e); }
}

function jumpToReport() {
  const title = $("assembly-title");
  title.scrollIntoView({ block: "start" });
  title.focus();
}

function legend() {
  if (!state.marks.size) return null;
  return h("details", { class: "legend" }, h("summary", {}, "What the marks mean"),
    h("dl", {}, Object.values(MARKS).map(([name, meaning]) =>
      h("div", {}, h("dt", {}, h("span", { class: "mark" }, name)), h("dd", {}, meaning)))));
}

function messageItem(m) {
  const fork = m.versions > 1;
  const inactive = state.otherFrom !== null && m.depth >= state.otherFrom;
  const marks = state.marks.get(m.id) || [];
  const text = m.content || (m.tool_calls.length ? "" : "(empty)");
  const long = text.length > FULL_TEXT_OVER;
  return h("li", { class: `message-item role-${m.role}${fork ? " fork" : ""}${inactive ? " inactive" : ""}` },
    fork ? versionSwitcher(m) : null,
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
          : text ? h("p", { class: "content" }, text) : null,
      m.tool_calls.length ? toolCalls(m.tool_calls) : null,
    ),
  );
}

// A tool call: its name and the arguments it was called with (long ones open on demand).
function toolCalls(calls) {
  return h("ul", { class: "tool-calls", "aria-label": "Tool calls" }, calls.map((call) => {
    const args = call.arguments || "{}";
    return h("li", {}, h("span", { class: "hint" }, "calls "), h("code", { class: "tool-name" }, call.name), " ",
      args.length > FULL_TEXT_OVER
        ? h("details", { class: "tool-arguments" }, h("summary", {}, h("code", {}, excerpt(args, 80))), h("pre", {}, args))
        : h("code", { class: "tool-arguments" }, args));
  }));
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

function versionSwitcher(m) {
  const show = async (step) => {
    try {
      const path = `/v1/conversations/${encodeURIComponent(state.id)}/messages/${encodeURIComponent(m.id)}/siblings`;
      const siblings = await api("GET", path);
      const other = siblings[siblings.findIndex((s) => s.id === m.id) + step];
      if (!other) return;
      await showThrough(other.id);
      focusSwitcher(other.id);
    } catch (e) { fail(e); }
  };
  return h("div", { class: "versions", role: "group", "aria-label": `Versions of this ${m.role} message` },
    h("button", {
      type: "button", class: "prev", disabled: m.version === 1, "aria-label": "Previous version",
      onclick: () => show(-1),
    }, "‹"),
    h("span", { class: "version-label", id: `versions-${m.id}`, "aria-live": "polite" }, `version ${m.version} of ${m.versions}`),
    h("button", {
      type: "button", class: "next", disabled: m.version === m.versions, "aria-label": "Next version",
      onclick: () => show(1),
    }, "›"),
  );
}

function focusSwitcher(id) {
  const label = document.getElementById(`versions-${id}`);
  const button = label && label.parentElement.querySelector("button:not([disabled])");
  if (button) button.focus();
}

function focusNode(id, block = "center") {
  const node = document.getElementById(`node-${id}`);
  if (node) { node.scrollIntoView({ block }); node.focus(); }
}

function renderAssembly(record) {
  const box = $("last-assembly");
  if (!record) {
    fill(box, h("p", { class: "empty" }, "No request has been assembled for this conversation yet."));
    return;
  }
  const r = record.report;
  const table = h("table", {},
    h("caption", {}, `Tokens per section, ${r.format} format, ${r.tokenizer} tokenizer`),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Section"), h("th", { scope: "col", class: "num" }, "Tokens"))),
    h("tbody", {}, Object.entries(r.sections).map(([name, tokens]) =>
      h("tr", {}, h("th", { scope: "row" }, sectionName(name), " ", h("code", { class: "hint" }, name)),
        h("td", { class: "num" }, String(tokens))))),
    h("tfoot", {}, h("tr", {}, h("th", { scope: "row" }, "Total"), h("td", { class: "num" }, String(r.total_tokens)))),
  );
  const facts = h("dl", { class: "meta facts" },
    h("div", {}, h("dt", {}, "Assembled"), h("dd", {}, h("time", { datetime: record.at }, formatDate(record.at)))),
    h("div", {}, h("dt", {}, "Context window"), h("dd", {}, `${r.context_window} (output reserved: ${r.max_output})`)),
    h("div", {}, h("dt", {}, "Input budget"), h("dd", {}, `${r.input_budget} (history: ${r.history_budget})`)),
    h("div", {}, h("dt", {}, "Messages included"), h("dd", {}, String(r.included_ids.length))),
    h("div", {}, h("dt", {}, "Evicted"), h("dd", {}, String(r.evicted_count))),
    h("div", {}, h("dt", {}, "Brought back"), h("dd", {}, String((r.retrieved_ids || []).length))),
    h("div", {}, h("dt", {}, "Tool results stubbed"), h("dd", {}, String(r.stubbed_ids.length))),
    h("div", {}, h("dt", {}, "Memories used"), h("dd", {}, String(r.memory_ids.length))),
    r.summary_id ? h("div", {}, h("dt", {}, "Summary"), h("dd", {}, r.summary_id)) : null,
  );
  fill(box, table, facts);
}

export async function openMessage(messageId) {
  try {
    const message = await api("GET", `/v1/messages/${encodeURIComponent(messageId)}`);
    location.replace(`#/conversations/${encodeURIComponent(message.conversation_id)}/m/${encodeURIComponent(message.id)}`);
  } catch (e) {
    showView("conversation-view");
    fill($("tree"));
    fill($("last-assembly"));
    $("conversation-title").textContent = "That message no longer exists";
    $("conversation-title").focus();
    if (!(e instanceof ApiError && e.status === 404)) fail(e);
  }
}
