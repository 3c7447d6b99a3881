// "People and things you've mentioned": the entities convmem read from the user's
// conversations (derived data), each statement with who said it (you, the assistant, or a named
// participant). A statement is used in other conversations only once the user allows it (or the
// organisation's policy does); the user can delete one statement or a whole entity (the messages
// stay), or keep one statement as a memory — an explicit act, through the same consent and
// never-store checks as "remember that …". Server text is only set as textContent.

import { api, excerpt, fail, fill, formatDate, h, say } from "./app.js";

const $ = (id) => document.getElementById(id);
const TYPE_LABEL = {
  person: "Person", animal: "Animal", place: "Place", organisation: "Organisation",
  project: "Project", work: "Book, film or other work", thing: "Thing",
};
const PAGE = 50;
const FACTS_PAGE = 20; // statements shown at a time: an entity may be mentioned a thousand times

export async function loadEntities() {
  try {
    renderEntities(await api("GET", `/v1/entities?limit=${PAGE}`));
  } catch (e) { fail(e); }
}

function renderEntities(entities) {
  fill($("entity-list"), entities.map(entityItem));
  $("entities-empty").hidden = entities.length > 0;
}

function entityItem(entity) {
  const nameId = `entity-${entity.id}`;
  const facts = h("ul", { class: "fact-list" });
  const more = h("button", { type: "button", class: "more-facts", hidden: true }, "Show more statements");
  const details = h("details", { class: "entity-facts" },
    h("summary", {}, `What was said about it (${entity.mention_count})`), facts, more);
  details.addEventListener("toggle", () => { if (details.open) loadFacts(entity, facts, nameId); });
  const also = entity.aliases.length ? `; also ${entity.aliases.join(", ")}` : "";
  return h("li", { class: "entity", "data-id": entity.id },
    h("p", { class: "entity-name", id: nameId }, entity.name),
    h("p", { class: "hint" },
      `${TYPE_LABEL[entity.type] || entity.type}${also}. Last mentioned `,
      h("time", { datetime: entity.last_mention }, formatDate(entity.last_mention)), "."),
    details,
    h("div", { class: "actions" }, h("button", {
      type: "button", class: "danger", "aria-describedby": nameId,
      onclick: () => removeEntity(entity),
    }, "Delete")),
  );
}

// who said a statement: never "you" for the assistant's words
function speakerLabel(fact) {
  if (fact.speaker_name) {
    return `${fact.speaker_name} (${fact.speaker === "assistant" ? "assistant" : "participant"})`;
  }
  return fact.speaker === "assistant" ? "The assistant" : "You";
}

// The first page of statements (again, after a change), or the next one after those shown.
async function loadFacts(entity, list, nameId, next = false) {
  const offset = next ? list.children.length : 0;
  try {
    // one more than a page: whether another page follows
    const found = await api("GET",
      `/v1/entities/${encodeURIComponent(entity.id)}/facts?limit=${FACTS_PAGE + 1}&offset=${offset}`);
    const items = found.slice(0, FACTS_PAGE).map((fact) => factItem(entity, fact, list, nameId));
    if (next) list.append(...items); else fill(list, items);
    const more = list.nextElementSibling;
    more.hidden = found.length <= FACTS_PAGE;
    more.onclick = () => loadFacts(entity, list, nameId, true);
    if (next && items.length) items[0].querySelector("button").focus();
  } catch (e) { fail(e); }
}

function factItem(entity, fact, list, nameId) {
  const textId = `fact-${fact.id}`;
  const shared = fact.status === "confirmed";
  const actions = [];
  if (!shared) {
    actions.push(h("button", {
      type: "button", class: "confirm", "aria-describedby": `${nameId} ${textId}`,
      onclick: () => confirmFact(entity, fact, list, nameId),
    }, "Use in other chats"));
  }
  actions.push(
    h("button", {
      type: "button", class: "promote", "aria-describedby": `${nameId} ${textId}`,
      onclick: () => promoteFact(entity, fact),
    }, "Keep as memory"),
    h("button", {
      type: "button", class: "danger", "aria-describedby": `${nameId} ${textId}`,
      onclick: () => removeFact(entity, fact, list, nameId),
    }, "Delete statement"));
  return h("li", { class: `fact status-${fact.status}` },
    h("p", { class: "speaker" }, `${speakerLabel(fact)} said:`),
    h("p", { id: textId }, `“${excerpt(fact.text, 400)}”`),
    h("p", { class: "hint" },
      h("time", { datetime: fact.said_at }, formatDate(fact.said_at)), " · ",
      h("a", { href: `#/messages/${encodeURIComponent(fact.message_id)}` }, "the message"), " · ",
      shared ? "used in your other chats" : "only in the chat it came from"),
    h("div", { class: "actions" }, ...actions));
}

async function confirmFact(entity, fact, list, nameId) {
  try {
    await api("POST", `/v1/entities/${encodeURIComponent(entity.id)}/facts/${encodeURIComponent(fact.id)}/confirm`);
    say("This statement may now be used in your other chats.");
    await loadFacts(entity, list, nameId);
  } catch (e) { fail(e); }
}

async function removeFact(entity, fact, list, nameId) {
  try {
    await api("DELETE", `/v1/entities/${encodeURIComponent(entity.id)}/facts/${encodeURIComponent(fact.id)}`);
    say("Deleted the statement; your messages are unchanged.");
    // the last statement takes the entity along
    if (list.children.length <= 1) await loadEntities();
    else await loadFacts(entity, list, nameId);
  } catch (e) { fail(e); }
}

async function removeEntity(entity) {
  try {
    await api("DELETE", `/v1/entities/${encodeURIComponent(entity.id)}`);
    say(`Deleted what convmem noted about ${entity.name}; your messages are unchanged.`);
    await loadEntities();
    $("entities-title").focus();
  } catch (e) { fail(e); }
}

async function promoteFact(entity, fact) {
  try {
    await api("POST", `/v1/entities/${encodeURIComponent(entity.id)}/facts/${encodeURIComponent(fact.id)}/promote`);
    say("Kept as a memory.");
    // the new memory appears in the list above
    document.dispatchEvent(new CustomEvent("convmem:memories-changed"));
  } catch (e) { fail(e); }
}
