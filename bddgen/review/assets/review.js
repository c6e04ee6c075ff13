"use strict";
(function () {
  const TOKEN = new URLSearchParams(location.search).get("token") || "";
  const embedded = document.getElementById("suite-data");
  const readOnly = Boolean(embedded);
  let suite = null;
  let focus = 0; // index into the list of turn elements
  let busy = false;

  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") el.className = value;
      else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
      else el.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      el.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return el;
  }

  function status(message, isError, reload) {
    const bar = document.getElementById("status");
    bar.replaceChildren(message || "");
    bar.className = isError ? "error" : "";
    if (reload) bar.append(" ", h("button", { type: "button", onclick: load, "data-action": "reload" }, "Reload"));
  }

  function showCounts(counts) {
    const c = counts.conversations, t = counts.turns;
    const shown = [
      h("span", { title: "conversations" }, `conversations: ${c.reviewed} reviewed · ${c.unreviewed} unreviewed · ${c.rejected} rejected`),
      h("span", { title: "turns" }, `turns: ${t.reviewed} reviewed · ${t.unreviewed} unreviewed · ${t.rejected} rejected`),
    ];
    if (counts.disagreeing) shown.push(h("span", { class: "badge rejected" }, `${counts.disagreeing} edited answer(s) disagree with their evidence`));
    document.getElementById("counts").replaceChildren(...shown);
  }

  // --- evidence -----------------------------------------------------------------------------

  function evidenceView(ev, turn) {
    const view = evidenceBody(ev, turn);
    if (ev.located) view.append(h("p", { class: "note located" }, "Found in the turn's documents: no evidence was recorded when this turn was written."));
    return view;
  }

  function evidenceBody(ev, turn) {
    if (ev.kind === "table") {
      const filterCols = new Set(Object.keys(ev.filter));
      const head = h("tr", {}, ev.headers.map((name) => h("th", {}, name)));
      const row = h("tr", {}, ev.cells.map((cell, i) => {
        const name = ev.headers[i];
        const cls = name === ev.column ? "answer-cell" : filterCols.has(name) ? "filter-cell" : null;
        return h("td", { class: cls, "data-column": name }, cell);
      }));
      const filter = Object.entries(ev.filter).map(([c, v]) => `${c} = "${v}"`).join(" and ");
      return h("div", { class: "evidence table-evidence" },
        h("div", { class: "label" }, `Evidence: table ${ev.document} (${ev.title}), row ${ev.row}`),
        h("div", { class: "scroll" }, h("table", {}, h("thead", {}, head), h("tbody", {}, row))),
        h("div", { class: "filter" }, `filter: ${filter} → ${ev.column} = "${ev.value}"`),
        turn.exact ? h("div", { class: "note" }, `the answer must contain "${turn.exact}"`) : null,
      );
    }
    if (ev.kind === "sentence") {
      return h("div", { class: "evidence sentence-evidence" },
        h("div", { class: "label" }, `Evidence: sentence ${ev.sentence + 1} of ${ev.document} (${ev.title})`),
        h("div", { class: "passage" }, ev.sentences.map((s, i) =>
          i === ev.sentence ? [h("mark", { class: "evidence-sentence" }, s), " "] : [s, " "])),
      );
    }
    if (ev.kind === "plan") {
      return h("div", { class: "evidence plan-evidence" },
        h("div", { class: "label" }, `Evidence: a query on ${ev.document}, run by code`),
        h("pre", { class: "plan" }, ev.plan),
        h("div", { class: "filter" }, `${ev.note} → "${ev.value}"`),
        turn.exact ? h("div", { class: "note" }, `the answer must contain "${turn.exact}"`) : null,
      );
    }
    if (ev.kind === "absent") {
      return h("div", { class: "evidence absent-evidence" },
        h("div", { class: "label" }, "Evidence: absent from the corpus"),
        h("p", {}, `No document mentions the ${ev.attribute} of ${ev.entity}; the assistant should say it cannot answer.`),
        h("p", { class: "note" }, `Retrieved for the question, none mentioning it: ${ev.retrieved.join(", ") || "none"}`),
      );
    }
    if (ev.kind === "declined") {
      return h("div", { class: "evidence absent-evidence" },
        h("div", { class: "label" }, "Evidence: the assistant's rule"),
        h("p", {}, `Off limits: "${ev.rule}"; the assistant should decline.`),
      );
    }
    if (ev.kind === "turns") {
      return h("div", { class: "evidence turns-evidence" },
        h("div", { class: "label" }, "Evidence: earlier answers"),
        h("p", {}, `Combines the answers of turns ${ev.turns.join(", ")}.`),
      );
    }
    return h("div", { class: "evidence missing-evidence" }, h("div", { class: "label" }, "Evidence"), h("p", { class: "note" }, ev.note));
  }

  function checkChips(title, checks) {
    if (!checks.length) return null;
    return h("div", { class: "checks" }, h("span", { class: "label" }, title),
      checks.map((c) => h("span", { class: `check ${c.passed ? "pass" : "fail"}`, title: c.detail, "data-check": c.name }, `${c.passed ? "✓" : "✗"} ${c.name}`)));
  }

  function callView(hash) {
    if (!hash) return null;
    const box = h("details", { class: "call" }, h("summary", {}, `LM call ${hash.slice(0, 12)}`));
    let loaded = false;
    box.addEventListener("toggle", async () => {
      if (!box.open || loaded) return;
      loaded = true;
      const calls = readOnly ? (suite.calls[hash] || []) : ((await api(`/api/call/${hash}`)) || {}).calls || [];
      if (!calls.length) { box.append(h("p", { class: "note" }, "This call is not in the project's call log.")); return; }
      const call = calls[0];
      const messages = (call.messages || []).map((m) => `## ${m[0] || m.role}\n${m[1] || m.content}`).join("\n\n");
      box.append(h("p", { class: "note" }, `${call.task} · ${call.model} · ${call.time}${call.cache_hit ? " · cache hit" : ""}`),
        h("pre", {}, messages), h("div", { class: "label" }, "Reply"), h("pre", {}, call.reply || ""));
    });
    return box;
  }

  // --- rendering ----------------------------------------------------------------------------

  function turnView(spec, conv, turn) {
    const flagged = turn.disagrees.length
      ? h("div", { class: "flag", "data-flag": "disagrees" }, `The answer disagrees with its evidence: ${turn.disagrees.join("; ")}`)
      : null;
    const answerText = turn.answer === "CANNOTANSWER" ? "(the assistant should say it cannot answer)" : turn.answer;
    const left = h("div", {},
      h("div", { class: "meta" }, h("span", { class: "qtype" }, turn.query_type), h("span", { class: `badge ${turn.state}` }, turn.state),
        turn.marks.filter((m) => m !== "reviewed").map((m) => h("span", { class: `badge ${m}` }, m)), h("span", { class: "note" }, `turn ${turn.number}`)),
      h("div", { class: "label" }, "Question"), h("div", { class: "text question", "data-field": "question" }, turn.question),
      h("div", { class: "label" }, "Reference answer"), h("div", { class: "text answer", "data-field": "answer" }, answerText),
      flagged,
      checkChips("written:", turn.recorded),
      checkChips("now:", turn.now),
      turn.rewrites.length ? h("div", { class: "note" }, `rewritten ${turn.rewrites.length}×: ${turn.rewrites.join(" · ")}`) : null,
      callView(turn.prompt_hash),
      h("div", { class: "actions" },
        h("button", { type: "button", class: "primary", "data-action": "accept-turn", onclick: () => act(spec, conv, turn, "accept-turn") }, "Accept ", h("kbd", {}, "a")),
        turn.answer !== "CANNOTANSWER" ? h("button", { type: "button", "data-action": "edit-answer", onclick: () => startEdit(spec, conv, turn, "answer") }, "Edit answer ", h("kbd", {}, "e")) : null,
        h("button", { type: "button", "data-action": "edit-question", onclick: () => startEdit(spec, conv, turn, "question") }, "Edit question ", h("kbd", {}, "q")),
        h("button", { type: "button", class: "danger", "data-action": "reject-turn", onclick: () => askReason(spec, conv, turn, "reject-turn") }, "Reject turn ", h("kbd", {}, "r")),
      ),
    );
    return h("section", { class: "turn", "data-conv": conv.id, "data-turn": turn.number, "data-spec": spec.path, tabindex: "-1" }, left, evidenceView(turn.evidence, turn));
  }

  function conversationView(spec, conv) {
    const locked = conv.locked;
    return h("article", { class: `conversation ${conv.state}`, id: `conv-${conv.id}`, "data-conv": conv.id, "data-state": conv.state },
      h("div", { class: "head" },
        h("h3", {}, conv.title),
        h("span", { class: `badge ${conv.state}` }, conv.state),
        locked ? h("span", { class: "badge locked" }, "locked") : null,
        h("span", { class: "chain" }, conv.chain.join(" → ")),
        h("div", { class: "actions" },
          h("button", { type: "button", class: "primary", "data-action": "accept-conversation", onclick: () => act(spec, conv, null, "accept-conversation") }, "Accept conversation ", h("kbd", {}, "A")),
          h("button", { type: "button", class: "danger", "data-action": "reject-conversation", onclick: () => askReason(spec, conv, null, "reject-conversation") }, "Reject conversation ", h("kbd", {}, "R")),
          h("button", { type: "button", "data-action": locked ? "unlock" : "lock", onclick: () => act(spec, conv, null, locked ? "unlock" : "lock") }, locked ? "Unlock " : "Lock ", h("kbd", {}, "l")),
        ),
      ),
      conv.reason ? h("div", { class: "reason" }, `Rejected: ${conv.reason}`) : null,
      conv.turns.map((turn) => turnView(spec, conv, turn)),
      conv.rejected_turns.map((r) => h("div", { class: "rejected-turn" }, `Rejected turn ${r.turn}: "${r.question}" — ${r.reason}`)),
    );
  }

  function specView(spec) {
    return h("section", { class: "spec", id: `spec-${spec.path}`, "data-spec": spec.path },
      h("h2", {}, spec.title || spec.path), h("div", { class: "path" }, spec.path),
      spec.problems.length ? h("div", { class: "flag" }, spec.problems.join("\n")) : null,
      h("div", { class: "gwt" }, spec.given.map((g) => h("div", {}, `Given ${g}`)), spec.when.map((w) => h("div", {}, `When ${w}`)), spec.then.map((t) => h("div", {}, `Then ${t}`))),
      spec.skipped ? h("p", { class: "note" }, `Not reviewed: ${spec.skipped}.`)
        : spec.conversations.length ? spec.conversations.map((c) => conversationView(spec, c)) : h("p", { class: "note" }, "No conversations yet (run `bddgen implement`)."),
    );
  }

  function render() {
    document.body.classList.toggle("read-only", readOnly);
    showCounts(suite.counts);
    document.getElementById("specs").replaceChildren(...suite.specs.map((spec) => {
      const states = spec.conversations.map((c) => c.state);
      const done = states.filter((s) => s !== "unreviewed").length;
      const progress = spec.skipped ? "not reviewed: no spec" : `${done}/${states.length} conversations reviewed or rejected`;
      return h("a", { href: `#spec-${spec.path}` }, spec.title || spec.path, h("br"), h("small", {}, progress));
    }));
    document.getElementById("suite").replaceChildren(...suite.specs.map(specView));
    setFocus(Math.min(focus, turns().length - 1), false);
  }

  // --- focus and keyboard ---------------------------------------------------------------------

  function turns() { return Array.from(document.querySelectorAll("section.turn")); }

  function setFocus(index, scroll) {
    const all = turns();
    if (!all.length) return;
    focus = Math.max(0, Math.min(index, all.length - 1));
    all.forEach((el, i) => el.classList.toggle("focused", i === focus));
    if (scroll) all[focus].scrollIntoView({ block: "nearest" });
  }

  function focused() {
    const el = turns()[focus];
    if (!el) return null;
    const spec = suite.specs.find((s) => s.path === el.dataset.spec);
    const conv = spec.conversations.find((c) => c.id === el.dataset.conv);
    const turn = conv.turns.find((t) => String(t.number) === el.dataset.turn);
    return { spec, conv, turn };
  }

  document.addEventListener("keydown", (event) => {
    if (event.target.closest("textarea, input") || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "?") { toggleHelp(); return; }
    if (readOnly) { if (event.key === "j") setFocus(focus + 1, true); if (event.key === "k") setFocus(focus - 1, true); return; }
    const here = focused();
    const keys = {
      j: () => setFocus(focus + 1, true),
      k: () => setFocus(focus - 1, true),
      a: () => here && act(here.spec, here.conv, here.turn, "accept-turn"),
      A: () => here && act(here.spec, here.conv, null, "accept-conversation"),
      e: () => here && here.turn.answer !== "CANNOTANSWER" && startEdit(here.spec, here.conv, here.turn, "answer"),
      q: () => here && startEdit(here.spec, here.conv, here.turn, "question"),
      r: () => here && askReason(here.spec, here.conv, here.turn, "reject-turn"),
      R: () => here && askReason(here.spec, here.conv, null, "reject-conversation"),
      l: () => here && act(here.spec, here.conv, null, here.conv.locked ? "unlock" : "lock"),
    };
    if (keys[event.key]) { event.preventDefault(); keys[event.key](); }
  });

  document.addEventListener("click", (event) => {
    const el = event.target.closest("section.turn");
    if (el) setFocus(turns().indexOf(el), false);
  });

  function toggleHelp() { const help = document.getElementById("help"); help.hidden = !help.hidden; }
  document.getElementById("help-button").addEventListener("click", toggleHelp);

  // --- editing ------------------------------------------------------------------------------

  function turnElement(conv, turn) { return document.querySelector(`section.turn[data-conv="${CSS.escape(conv.id)}"][data-turn="${turn.number}"]`); }

  function inlineInput(host, element, onSave) {
    const cancel = () => render();
    element.addEventListener("keydown", (event) => {
      if (event.key === "Escape") { event.preventDefault(); cancel(); }
      if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); onSave(element.value); }
    });
    host.replaceWith(element);
    element.focus();
  }

  function startEdit(spec, conv, turn, field) {
    const el = turnElement(conv, turn);
    const target = el && el.querySelector(`[data-field="${field}"]`);
    if (!target) return;
    const box = h("textarea", { class: "edit-box", rows: 2, "aria-label": `edit the ${field}` });
    box.value = turn[field];
    inlineInput(target, box, (value) => act(spec, conv, turn, `edit-${field}`, { text: value }));
  }

  function askReason(spec, conv, turn, action) {
    const el = turn ? turnElement(conv, turn) : document.getElementById(`conv-${conv.id}`);
    const anchor = el && el.querySelector(".actions");
    if (!anchor) return;
    const box = h("input", { class: "reason-box", type: "text", placeholder: `Why reject this ${turn ? "turn" : "conversation"}? (Enter to reject, Esc to cancel)`, "aria-label": "reason" });
    inlineInput(anchor, box, (value) => {
      if (!value.trim()) { status("A rejection needs a reason.", true); return; }
      act(spec, conv, turn, action, { reason: value });
    });
  }

  // --- server -------------------------------------------------------------------------------

  async function api(path, body) {
    const response = await fetch(path, {
      method: body ? "POST" : "GET",
      headers: { "X-Review-Token": TOKEN, ...(body ? { "Content-Type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const data = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
    if (!response.ok) { status(data.error || `HTTP ${response.status}`, true, data.reload); return null; }
    return data;
  }

  async function act(spec, conv, turn, action, extra) {
    if (readOnly || busy) return;
    busy = true;
    try {
      const data = await api("/api/action", { path: spec.path, version: spec.version, action, conversation: conv.id, turn: turn ? turn.number : null, ...(extra || {}) });
      if (!data) return;
      const at = suite.specs.findIndex((s) => s.path === spec.path);
      suite.specs[at] = data.spec;
      suite.counts = data.counts;
      render();
      const changed = data.spec.conversations.find((c) => c.id === conv.id);
      const now = changed && turn ? changed.turns.find((t) => t.number === turn.number) : null;
      if (now && now.disagrees.length) status(`Saved, but turn ${turn.number}'s answer disagrees with its evidence (flagged in the file).`, true);
      else status(`Saved: ${action.replace("-", " ")} in ${spec.path}.`, false);
    } finally {
      busy = false;
    }
  }

  async function load() {
    if (readOnly) { suite = JSON.parse(embedded.textContent); render(); status("Read-only export.", false); return; }
    const data = await api("/api/suite");
    if (!data) return;
    suite = data;
    render();
    status("Ready. Press ? for the keys.", false);
  }

  load();
})();
