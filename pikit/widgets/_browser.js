// pikit session browser: a sortable, searchable, virtualized table of sessions.
//
// Model state (from Python):
//   rows_data:  UTF-8 JSON bytes of [[path, key_0..key_n-1, text_0..text_n-1], ...]
//   columns:    [[title, numeric, width], ...]
//   search:     words; a row is shown when every word is in one of its texts (case-insensitive)
//   sort_column, sort_descending: the order (clicking a heading sets them)
//   selected_path: the row last clicked (set here, read by Python)
//   row_height, height: pixels
// Written back: shown_count (rows matching the search), render_ms (view creation to first paint).
// Session text only ever reaches the DOM through textContent, never innerHTML.

function render({ model, el }) {
  const t0 = performance.now();
  const root = document.createElement("div");
  root.className = "pikit-browser";
  const bar = document.createElement("div");
  bar.className = "pikit-browser-bar";
  const search = document.createElement("input");
  search.type = "search";
  search.className = "pikit-browser-search";
  search.placeholder = "search sessions… (all words must match)";
  search.value = model.get("search") || "";
  const count = document.createElement("span");
  count.className = "pikit-browser-count";
  bar.appendChild(search);
  bar.appendChild(count);
  const head = document.createElement("div");
  head.className = "pikit-browser-head";
  const viewport = document.createElement("div");
  viewport.className = "pikit-browser-viewport";
  viewport.setAttribute("role", "grid");
  const spacer = document.createElement("div");
  spacer.className = "pikit-browser-spacer";
  viewport.appendChild(spacer);
  root.appendChild(bar);
  root.appendChild(head);
  root.appendChild(viewport);
  el.appendChild(root);

  const decoder = new TextDecoder();
  let rows = [];
  let order = [];
  let lowered = [];
  const rowH = () => model.get("row_height") || 26;
  const columns = () => model.get("columns") || [];
  const template = () => columns().map((c) => c[2] || "1fr").join(" ");

  function readRows() {
    const data = model.get("rows_data");
    try { rows = JSON.parse(typeof data === "string" ? data : decoder.decode(data)); } catch (e) { rows = []; }
    const n = columns().length;
    lowered = rows.map((r) => r.slice(1 + n, 1 + 2 * n).join("\u0001").toLowerCase());
  }

  function compute() {
    const n = columns().length;
    const words = (model.get("search") || "").toLowerCase().split(/\s+/).filter((w) => w);
    order = [];
    for (let i = 0; i < rows.length; i++) {
      if (words.every((w) => lowered[i].includes(w))) order.push(i);
    }
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
    count.textContent = order.length + " of " + rows.length + " sessions";
    model.set("shown_count", order.length);
    model.save_changes();
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
  readRows(); compute(); drawHead(); paint();
  search.addEventListener("input", () => { model.set("search", search.value); model.save_changes(); });
  viewport.addEventListener("scroll", schedule);
  model.on("change:rows_data", () => { readRows(); compute(); paint(); });
  model.on("change:search", () => {
    if (search.value !== model.get("search")) search.value = model.get("search");
    viewport.scrollTop = 0; compute(); paint();
  });
  model.on("change:sort_column", () => { compute(); drawHead(); paint(); });
  model.on("change:sort_descending", () => { compute(); drawHead(); paint(); });
  model.on("change:selected_path", schedule);
  requestAnimationFrame(() => {
    paint();
    model.set("render_ms", performance.now() - t0);
    model.save_changes();
  });
}

export default { render };
