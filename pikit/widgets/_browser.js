// pikit session browser: a sortable, searchable, virtualized table of sessions.
//
// Model state (from Python):
//   rows_data:  UTF-8 JSON bytes of [[path, key_0..key_n-1, text_0..text_n-1], ...]
//   columns:    [[title, numeric, width], ...]
//   search:     the words typed (set here, after a short pause in typing; the kernel searches for them)
//   matches:    UTF-8 JSON bytes of {"search": words, "rows": [row indexes] | null}: the rows the kernel's
//               search kept for those words (null: every row); until they come the count says "searching"
//   searchable: whether the search box is on (the kernel has message text to search)
//   sort_column, sort_descending: the order (clicking a heading sets them)
//   selected_path: the row last clicked (set here, read by Python)
//   selected_id, resume: that session's id and the command that resumes it (from Python), shown under the
//               table in a read-only field (select it, or the copy button puts it on the clipboard)
//   row_height, height: pixels
// Written back: render_ms (view creation to first paint).
// Session text only ever reaches the DOM through textContent, never innerHTML.

// A new element of the page, with its class.
function part(tag, className) {
  const element = document.createElement(tag);
  element.className = className;
  return element;
}

function render({ model, el }) {
  const t0 = performance.now();
  const root = part("div", "pikit-browser");
  const bar = part("div", "pikit-browser-bar");
  const search = document.createElement("input");
  search.type = "search";
  search.className = "pikit-browser-search";
  search.value = model.get("search") || "";
  const count = part("span", "pikit-browser-count");
  bar.appendChild(search);
  bar.appendChild(count);
  const head = part("div", "pikit-browser-head");
  const viewport = part("div", "pikit-browser-viewport");
  viewport.setAttribute("role", "grid");
  const spacer = part("div", "pikit-browser-spacer");
  viewport.appendChild(spacer);
  const resumeBar = part("div", "pikit-browser-resume");
  const sessionId = part("span", "pikit-browser-id");
  const command = document.createElement("input");
  command.type = "text";
  command.readOnly = true;
  command.className = "pikit-browser-command";
  command.setAttribute("aria-label", "command that resumes the session in Pi");
  const copy = document.createElement("button");
  copy.type = "button";
  copy.className = "pikit-browser-copy";
  copy.textContent = "copy";
  copy.title = "copy the command that resumes this session";
  resumeBar.appendChild(sessionId);
  resumeBar.appendChild(command);
  resumeBar.appendChild(copy);
  root.appendChild(bar);
  root.appendChild(head);
  root.appendChild(viewport);
  root.appendChild(resumeBar);
  el.appendChild(root);

  function showResume() {
    const text = model.get("resume") || "";
    resumeBar.hidden = !text;
    sessionId.textContent = model.get("selected_id") || "";
    command.value = text;
    copy.textContent = "copy";
  }
  command.addEventListener("focus", () => command.select());
  copy.addEventListener("click", async () => {
    command.select();
    let done = false;
    try {
      await navigator.clipboard.writeText(command.value);
      done = true;
    } catch (e) {
      try { done = document.execCommand("copy"); } catch (e2) { done = false; }
    }
    copy.textContent = done ? "copied" : "select and copy";
  });

  const decoder = new TextDecoder();
  const number = (n) => n.toLocaleString("en-US");
  let rows = [];
  let order = [];
  let kept = null;
  let keptFor = "";
  const rowH = () => model.get("row_height") || 26;
  const columns = () => model.get("columns") || [];
  const template = () => columns().map((c) => c[2] || "1fr").join(" ");

  function readJSON(name, fallback) {
    const data = model.get(name);
    try { return JSON.parse(typeof data === "string" ? data : decoder.decode(data)); } catch (e) { return fallback; }
  }

  function readRows() { rows = readJSON("rows_data", []); }

  function readMatches() {
    const matches = readJSON("matches", { search: "", rows: null });
    kept = Array.isArray(matches.rows) ? matches.rows.filter((i) => i >= 0 && i < rows.length) : null;
    keptFor = String(matches.search || "");
  }

  function setSearchable() {
    const on = !!model.get("searchable");
    search.disabled = !on;
    search.placeholder = on ? "search the messages… (user and assistant text; every word must occur)"
      : "search needs the corpus: SessionBrowser(corpus)";
    search.title = on ? "the text of the sessions' user and assistant messages, as pikit sessions --search "
      + "searches it" : "a sessions DataFrame holds no message text to search";
  }

  function compute() {
    const n = columns().length;
    order = kept === null ? rows.map((_, i) => i) : kept.slice();
    const col = model.get("sort_column");
    const sign = model.get("sort_descending") ? -1 : 1;
    if (col >= 0 && col < n) {
      order.sort((a, b) => {
        const x = rows[a][1 + col], y = rows[b][1 + col];
        if (x === y) return a - b;
        if (x === null) return 1;
        if (y === null) return -1;
        return (x < y ? -1 : 1) * sign;
      });
    }
    const pending = keptFor !== (model.get("search") || "") || keptFor !== search.value;
    count.textContent = (pending ? "searching… " : "") + number(order.length) + " of " + number(rows.length)
      + " sessions";
  }

  function drawHead() {
    head.textContent = "";
    head.style.gridTemplateColumns = template();
    columns().forEach((c, i) => {
      const cell = document.createElement("button");
      cell.className = "pikit-browser-heading" + (c[1] ? " pikit-num" : "");
      const arrow = model.get("sort_column") === i ? (model.get("sort_descending") ? " ▼" : " ▲") : "";
      cell.textContent = c[0] + arrow;
      cell.dataset.column = String(i);
      cell.addEventListener("click", () => {
        if (model.get("sort_column") === i) model.set("sort_descending", !model.get("sort_descending"));
        else { model.set("sort_column", i); model.set("sort_descending", !!c[1]); }
        model.save_changes();
      });
      head.appendChild(cell);
    });
  }

  function paint() {
    const n = columns().length;
    const h = rowH();
    spacer.style.height = order.length * h + "px";
    spacer.textContent = "";
    const first = Math.max(0, Math.floor(viewport.scrollTop / h) - 5);
    const last = Math.min(order.length, Math.ceil((viewport.scrollTop + viewport.clientHeight) / h) + 5);
    const selected = model.get("selected_path");
    for (let k = first; k < last; k++) {
      const r = rows[order[k]];
      const div = document.createElement("div");
      div.className = "pikit-browser-row" + (r[0] === selected ? " pikit-selected" : "");
      div.style.top = k * h + "px";
      div.style.height = h + "px";
      div.style.gridTemplateColumns = template();
      div.dataset.path = r[0];
      div.setAttribute("role", "row");
      for (let c = 0; c < n; c++) {
        const cell = document.createElement("span");
        cell.className = "pikit-browser-cell" + (columns()[c][1] ? " pikit-num" : "");
        cell.textContent = r[1 + n + c];
        cell.title = r[1 + n + c];
        div.appendChild(cell);
      }
      div.addEventListener("click", () => {
        model.set("selected_path", r[0]);
        model.save_changes();
      });
      spacer.appendChild(div);
    }
  }

  let scheduled = false;
  function schedule() {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(() => { scheduled = false; paint(); });
  }

  viewport.style.height = (model.get("height") || 420) + "px";
  readRows(); readMatches(); setSearchable(); compute(); drawHead(); paint(); showResume();
  let typing = null;
  search.addEventListener("input", () => {
    compute();
    clearTimeout(typing);
    typing = setTimeout(() => { model.set("search", search.value); model.save_changes(); }, 150);
  });
  viewport.addEventListener("scroll", schedule);
  model.on("change:rows_data", () => { readRows(); readMatches(); compute(); paint(); });
  model.on("change:search", () => {
    if (search.value !== model.get("search")) search.value = model.get("search");
    compute();
  });
  model.on("change:matches", () => { readMatches(); viewport.scrollTop = 0; compute(); paint(); });
  model.on("change:searchable", setSearchable);
  model.on("change:sort_column", () => { compute(); drawHead(); paint(); });
  model.on("change:sort_descending", () => { compute(); drawHead(); paint(); });
  model.on("change:selected_path", schedule);
  model.on("change:resume", showResume);
  model.on("change:selected_id", showResume);
  requestAnimationFrame(() => {
    paint();
    model.set("render_ms", performance.now() - t0);
    model.save_changes();
  });
}

export default { render };
