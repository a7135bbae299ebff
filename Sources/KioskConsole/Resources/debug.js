// The network debugger's script, loaded by /debug pages only, after app.js (both are deferred, so they
// run in document order): the live request list, its waterfall and the JSON tree editor of a paused
// response. It uses app.js's swap of #results through `window.kiosk`.
(() => {
  "use strict";
  const kiosk = window.kiosk;
  if (!kiosk) return; // app.js failed: the pages work without either script
  const $ = (selector, root = document) => root.querySelector(selector);
  const $$ = (selector, root = document) => [...root.querySelectorAll(selector)];
  // The words the script shows, in the page's language (`ScriptWords`): "{name}" is filled in from `values`.
  const words = JSON.parse($("#console-words")?.dataset.words || "{}");
  const say = (name, values = {}) => (words[name] || "").replace(/\{(\w+)\}/g, (whole, key) => String(values[key] ?? whole));


  // 1: the list is live. The server pushes every change (Server-Sent Events from /debug/events, through
  // the list's own filter): new requests are put on top, a cleared log empties the list, the paused
  // banner follows the breakpoints. EventSource reconnects by itself and sends the last event id it
  // saw, so nothing is missed; when the server cannot replay the gap (restarted, or too long away) it
  // says "reset" and the list is read again. Older pages (paging back) are not live: they never change.
  let feed = null;
  function follow() {
    const results = $("#results[data-debug-list]");
    const url = results?.dataset.events;
    if (feed && feed.url === new URL(url || "", location.href).href) return;
    feed?.close();
    feed = null;
    if (!url || !("EventSource" in window)) return;
    const status = $("#live-status");
    const source = feed = new EventSource(url);
    source.onopen = () => { if (status) { status.textContent = say("live"); status.classList.remove("stalled"); } };
    source.onerror = () => {
      // A closed feed is one Kiosk answered with no stream (a device unpaired, a console's session ended, a token set
      // since): the browser never tries again, so the page is loaded again to say why (the pairing or login page) —
      // once in 30 s, after which the status says the list no longer follows.
      if (source.readyState === EventSource.CLOSED) {
        const key = "kiosk-feed-refused " + location.pathname, last = Number(sessionStorage.getItem(key) || 0);
        if (Date.now() - last > 30000) { sessionStorage.setItem(key, String(Date.now())); location.reload(); return; }
        if (status) { status.textContent = say("notLive"); status.classList.add("stalled"); }
        return;
      }
      if (status && source.readyState !== EventSource.OPEN) { status.textContent = say("reconnecting"); status.classList.add("stalled"); }
    };
    source.addEventListener("exchanges", event => {
      const data = JSON.parse(event.data);
      countLogged(data.logged);
      addRows(data.rows || []);
    });
    source.addEventListener("inflight", event => showInFlight(JSON.parse(event.data).rows || []));
    source.addEventListener("cleared", () => {
      const body = $("#results table.requests tbody");
      // (The exchanges in flight are not the log's: they stay.)
      if (body) for (const tr of $$("tr:not([data-inflight])", body)) tr.remove();
      // Nor are the hosts the log had reached lately: the Host menu keeps "any" and the one chosen, if any.
      const hostMenu = $("select[name=host]");
      if (hostMenu) for (const option of [...hostMenu.options]) if (option.value && !option.selected) option.remove();
      setCount(0);
      drawWaterfall();
    });
    source.addEventListener("paused", event => {
      showPaused(JSON.parse(event.data).count || 0);
      // The paused requests' own page lists them: read again when one begins or ends.
      if ($("#results")?.dataset.reloadOnPaused) kiosk.reloadResults();
    });
    source.addEventListener("reset", () => kiosk.reloadResults());
    // Recording paused or resumed in another tab: the list is read again, with the switch and its banner as they are now.
    source.addEventListener("recording", () => kiosk.reloadResults());
  }
  function setCount(count) {
    const element = $("#log-count");
    if (!element) return;
    element.dataset.count = String(count);
    element.textContent = say(count === 1 ? "requestsLoggedOne" : "requestsLoggedOther", { count });
  }
  function showPaused(count) {
    const banner = $("#paused-banner");
    if (!banner) return;
    banner.hidden = count === 0;
    const text = $("[data-count]", banner);
    if (text) text.textContent = say(count === 1 ? "pausedOne" : "pausedOther", { count });
  }
  // The log's count moves by every exchange logged (a filtered list gets the rows it shows alone): `logged` is the
  // first and last id of an event's, each counted once — those up to the newest the page (or an earlier event) counted
  // are not counted again.
  function countLogged(logged) {
    const element = $("#log-count");
    if (!element || !Array.isArray(logged) || logged.length !== 2) return;
    const [first, last] = logged.map(Number);
    const newest = Number(element.dataset.newest || 0);
    const more = last - Math.max(first - 1, newest);
    if (more <= 0) return;
    element.dataset.newest = String(last);
    setCount(Number(element.dataset.count || 0) + more);
  }
  // Rows come oldest first; each goes on top unless it is shown already (a page read while the event
  // was in flight lists it too). The list keeps the length it was served with.
  function addRows(rows) {
    const body = $("#results table.requests tbody");
    if (!body || !rows.length) return;
    const limit = Math.max(Number(new URL(kiosk.resultsURL()).searchParams.get("limit")) || 100, body.rows.length);
    let added = 0;
    for (const row of rows) {
      if (body.querySelector(`tr[data-id="${Number(row.request.id)}"]`)) continue;
      const template = document.createElement("template");
      template.innerHTML = `<table><tbody>${row.html}</tbody></table>`; // server-rendered, escaped there
      const tr = template.content.querySelector("tr");
      if (!tr) continue;
      tr.classList.add("new");
      // Below the exchanges in flight, which stay on top until they end.
      body.insertBefore(tr, $("tr:not([data-inflight])", body));
      added += 1;
    }
    while (body.rows.length > limit) body.lastElementChild.remove();
    if (added) {
      $("#results p.empty")?.remove();
      localTimes(body);
      drawWaterfall();
      announceNewRows(added);
    }
  }
  // Rows arriving are said to a screen reader, politely and at most every 5 s however fast they come ("12 new requests
  // in the list"), not row by row: the list stays usable while an app is busy.
  let unsaid = 0, sayingTimer = null;
  const newRowsSaid = document.body.appendChild(Object.assign(document.createElement("p"), { id: "new-rows-said", className: "visually-hidden" }));
  newRowsSaid.setAttribute("role", "status");
  function announceNewRows(count) {
    unsaid += count;
    if (sayingTimer) return;
    const sayNow = () => {
      if (!unsaid) { sayingTimer = null; return; }
      newRowsSaid.textContent = say(unsaid === 1 ? "newRowsOne" : "newRowsOther", { count: unsaid });
      unsaid = 0;
      sayingTimer = setTimeout(sayNow, 5000);
    };
    sayNow();
  }

  // 1b: the exchanges in flight (a slow answer, an open event stream) head the list until they end; the feed sends
  // them whole whenever they change, and their time in flight is counted on here from when each was read.
  // A row still listed is changed in place, cell by cell, and only where it changed: a selection in it (its URL being
  // copied) and a screen reader's place survive the feed's updates; its counting time is left to count on.
  function showInFlight(rows) {
    const body = $("#results table.requests tbody");
    if (!body) return;
    const wanted = new Set(rows.map(row => String(row.key)));
    for (const tr of $$("tr[data-inflight]", body)) if (!wanted.has(tr.dataset.inflight)) tr.remove();
    const now = String(performance.now());
    let previous = null;
    for (const row of rows) {
      const template = document.createElement("template");
      template.innerHTML = `<table><tbody>${row.html}</tbody></table>`; // server-rendered, escaped there
      const fresh = template.content.querySelector("tr");
      if (!fresh) continue;
      let tr = body.querySelector(`tr[data-inflight="${CSS.escape(String(row.key))}"]`);
      if (tr) {
        [...fresh.cells].forEach((cell, index) => {
          const shown = tr.cells[index];
          if (shown && !shown.classList.contains("dur") && shown.outerHTML !== cell.outerHTML) shown.replaceWith(cell.cloneNode(true));
        });
      } else {
        tr = fresh;
        tr.dataset.read = now;
      }
      const place = previous ? previous.nextElementSibling : body.firstElementChild;
      if (place !== tr) body.insertBefore(tr, place);
      previous = tr;
    }
    if (rows.length) {
      $("#results p.empty")?.remove();
      localTimes(body);
    }
  }
  function countInFlight() {
    const now = performance.now();
    for (const tr of $$("#results tr[data-inflight]")) {
      const cell = $("td.dur[data-elapsed]", tr);
      if (!cell) continue;
      if (!tr.dataset.read) tr.dataset.read = String(now);
      const elapsed = Number(cell.dataset.elapsed) + (now - Number(tr.dataset.read));
      cell.textContent = `${Math.floor(elapsed / 1000)} s…`;
    }
    // A paused exchange's time left (its deadline), counted down from when the list was read.
    for (const span of $$("#results .countdown[data-remaining]")) {
      if (!span.dataset.read) span.dataset.read = String(now);
      span.textContent = String(Math.max(0, Math.floor(Number(span.dataset.remaining) - (now - Number(span.dataset.read)) / 1000)));
    }
  }
  setInterval(countInFlight, 1000);

  // 2: the waterfall. Each row's cell holds its start and phases; the bars are drawn to the scale of
  // the rows in view (from the earliest start to the latest end among them), so the burst on screen reads like
  // DevTools' timeline rather than as dots on the scale of the whole session; scrolling draws it again.
  // SVG attributes, not inline styles: the page's policy forbids the latter.
  const phaseNames = ["queued", "connect", "wait", "download"];
  const svgNS = "http://www.w3.org/2000/svg";
  function bars(cells) {
    const spans = cells.map(cell => {
      const start = Number(cell.dataset.start);
      const phases = (cell.dataset.phases || "").split(",").map(value => (value === "" ? null : Number(value)));
      return { cell, start, phases, end: start + (phases[4] || 0) };
    }).filter(span => Number.isFinite(span.start));
    if (!spans.length) return;
    const inView = spans.filter(({ cell }) => {
      const box = cell.closest("tr")?.getBoundingClientRect() || cell.getBoundingClientRect();
      return box.bottom > 0 && box.top < window.innerHeight;
    });
    const scaled = inView.length ? inView : spans;
    const from = Math.min(...scaled.map(s => s.start)), to = Math.max(...scaled.map(s => s.end));
    const scale = 1000 / Math.max(to - from, 1);
    for (const { cell, start, phases } of spans) {
      const svg = document.createElementNS(svgNS, "svg");
      svg.setAttribute("viewBox", "0 0 1000 10");
      svg.setAttribute("preserveAspectRatio", "none");
      svg.setAttribute("aria-hidden", "true");
      let x = Math.max(0, (start - from) * scale);
      const measured = phases.slice(0, 4);
      const parts = measured.some(value => value !== null) ? measured : [null, null, phases[4], null];
      parts.forEach((value, index) => {
        if (!value) return;
        const rect = document.createElementNS(svgNS, "rect");
        const width = Math.max(value * scale, 6); // a phase of a few ms in a long window still shows
        rect.setAttribute("x", String(Math.min(x, 998)));
        rect.setAttribute("y", "1");
        rect.setAttribute("width", String(width));
        rect.setAttribute("height", "8");
        rect.setAttribute("class", phaseNames[index]);
        svg.append(rect);
        x += value * scale;
      });
      if (!svg.childElementCount) { // answered at once (from the store): a tick where it happened
        const tick = document.createElementNS(svgNS, "rect");
        for (const [name, value] of [["x", String(Math.min(x, 998))], ["y", "0"], ["width", "2"], ["height", "10"], ["class", "instant"]]) {
          tick.setAttribute(name, value);
        }
        svg.append(tick);
      }
      cell.replaceChildren(svg);
    }
  }
  function drawWaterfall() {
    bars($$("#results table.requests td.wf"));
    // The pane's request, alone on its own scale.
    for (const cell of $$(".timeline .wf")) bars([cell]);
  }
  document.addEventListener("kiosk:updated", event => { follow(); localTimes(event.detail?.root); drawWaterfall(); });
  let drawing = 0;
  const drawSoon = () => { if (!drawing) drawing = requestAnimationFrame(() => { drawing = 0; drawWaterfall(); }); };
  window.addEventListener("scroll", drawSoon, { passive: true });
  window.addEventListener("resize", drawSoon);

  // 4: times in the browser's time zone and the page's language (the page says them in UTC without the script).
  const language = document.documentElement.lang || undefined;
  const timeFormats = {
    time: new Intl.DateTimeFormat(language, { hour: "2-digit", minute: "2-digit", second: "2-digit" }),
    datetime: new Intl.DateTimeFormat(language, { dateStyle: "medium", timeStyle: "medium" }),
  };
  function localTimes(root = document) {
    for (const element of $$("time[data-local]", root || document)) {
      const date = new Date(element.dateTime), format = timeFormats[element.dataset.local];
      if (!format || Number.isNaN(date.getTime())) continue;
      element.title = element.textContent;
      element.textContent = format.format(date);
      delete element.dataset.local; // said once
    }
  }

  // 5: Copy (the cURL of a request): the button shows where the clipboard can be written.
  function copyButtons(root = document) {
    for (const button of $$("button.copy[data-copy]", root)) {
      if (!navigator.clipboard || button.dataset.ready) continue;
      button.dataset.ready = "1";
      if (!document.getElementById("copy-status")) {
        const status = Object.assign(document.createElement("span"), { id: "copy-status", className: "visually-hidden" });
        status.setAttribute("role", "status");
        document.body.append(status);
      }
      button.hidden = false;
      button.addEventListener("click", async () => {
        const source = document.getElementById(button.dataset.copy), label = button.textContent;
        try {
          await navigator.clipboard.writeText(source?.textContent || "");
          button.textContent = say("copied");
          // Said to a screen reader too: the button's own name (its aria-label) does not change with its text. (The
          // status is made, empty, when the button is: a live region's first content is often not read.)
          const status = document.getElementById("copy-status");
          if (status) status.textContent = say("copied");
          setTimeout(() => { button.textContent = label; if (status) status.textContent = ""; }, 2000);
        } catch { /* the text stays selectable */ }
      });
    }
  }
  document.addEventListener("kiosk:updated", event => copyButtons(event.detail?.root));

  // 6: the filter applies as it is typed (and at once when a menu changes), without a page load; the address
  // keeps only the fields that filter.
  const filterForm = $("form[data-live-filter]");
  if (filterForm) {
    // The hidden field of a menu that shows the value the box's text gives its key (the server's `shown_` field).
    const mirror = name => filterForm.querySelector(`input[type=hidden][name="shown_${CSS.escape(name)}"]`);
    const addressOf = () => {
      const url = new URL(filterForm.getAttribute("action") || location.pathname, location.href);
      // Not the `shown_` fields, nor a menu that only shows the box's term (`mirror`): the box says it.
      for (const [name, value] of new FormData(filterForm)) {
        if (!String(value).trim() || name.startsWith("shown_") || mirror(name)?.value === String(value)) continue;
        url.searchParams.set(name, String(value).trim());
      }
      return url.href;
    };
    let typing = 0;
    const apply = () => { clearTimeout(typing); if (addressOf() !== kiosk.resultsURL()) kiosk.loadResults(addressOf(), { errorPages: true }); };
    // A menu chosen takes its key's terms out of the box (the server lets the menu's choice stand the same way); a term
    // of a menu's key typed into the box sets that menu back to "any": what was done last wins, and the box and the
    // menus never say two things, one of them silently ignored.
    const terms = text => text.match(/(?:[^\s"]+|"[^"]*"?)+/g) || [];
    const keyOf = word => word.replace(/^-/, "").toLowerCase().split(":")[0];
    const dropTerms = (text, key) => terms(text).filter(word => !word.includes(":") || keyOf(word) !== key).join(" ");
    filterForm.addEventListener("input", event => {
      if (!event.target.matches("input")) return;
      if (event.target.name === "filter") {
        const typed = new Set(terms(event.target.value).filter(word => word.includes(":")).map(keyOf));
        for (const field of filterForm.querySelectorAll("[data-filter-key]")) {
          const shown = mirror(field.name);
          // A menu that only showed the box's term follows the box: "any" once the term is gone or being typed anew.
          if (field.value && (typed.has(field.dataset.filterKey) || shown?.value === field.value)) {
            field.value = "";
            shown?.remove();
          }
        }
      }
      clearTimeout(typing);
      typing = setTimeout(apply, 400);
    });
    filterForm.addEventListener("change", event => {
      if (!event.target.matches("select, input[data-filter-key]")) return;
      const box = filterForm.elements.namedItem("filter"), key = event.target.dataset.filterKey;
      mirror(event.target.name)?.remove();  // chosen now, no longer the box's
      if (box && key && event.target.value) box.value = dropTerms(box.value, key);
      apply();
    });
    filterForm.addEventListener("submit", event => { event.preventDefault(); apply(); });
    // Esc (or the clear button) empties a search box with a "search" event and no "input": the list follows the box.
    filterForm.addEventListener("search", apply, true);
  }

  // 3: the response editor of a paused request: the JSON as a tree whose scalars keep their types
  // (string, number, boolean, null), whose keys can be renamed and whose members and items can be
  // added and removed; every change is written back to the textarea, which is what the form sends.
  // Numbers keep their exact text and keys their order, so an untouched part is sent as it came.
  function parseJSON(text) {
    let i = 0;
    // A failure names its words (the page's language says them) and the character it stopped at.
    const fail = words => { throw Object.assign(new Error(words), { words, position: i }); };
    const space = () => { while (i < text.length && " \t\n\r".includes(text[i])) i++; };
    function value() {
      space();
      const c = text[i];
      if (c === "{") {
        i++; const items = []; space();
        if (text[i] === "}") { i++; return { t: "o", items }; }
        for (;;) {
          space(); if (text[i] !== '"') fail("jsonExpectedKey");
          const k = string(); space(); if (text[i] !== ":") fail("jsonExpectedColon"); i++;
          items.push({ k, v: value() }); space();
          if (text[i] === ",") { i++; continue; }
          if (text[i] === "}") { i++; return { t: "o", items }; }
          fail("jsonExpectedCommaOrBrace");
        }
      }
      if (c === "[") {
        i++; const items = []; space();
        if (text[i] === "]") { i++; return { t: "a", items }; }
        for (;;) {
          items.push(value()); space();
          if (text[i] === ",") { i++; continue; }
          if (text[i] === "]") { i++; return { t: "a", items }; }
          fail("jsonExpectedCommaOrBracket");
        }
      }
      if (c === '"') return { t: "s", v: string() };
      const literal = /^(true|false|null|-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?)/.exec(text.slice(i, i + 400));
      if (!literal) fail("jsonExpectedValue");
      i += literal[0].length;
      if (literal[0] === "null") return { t: "z" };
      if (literal[0] === "true" || literal[0] === "false") return { t: "b", v: literal[0] === "true" };
      return { t: "n", v: literal[0] };
    }
    function string() {
      const start = i; i++;
      while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
      if (i >= text.length) fail("jsonUnterminatedString");
      i++;
      try { return JSON.parse(text.slice(start, i)); } catch { i = start; fail("jsonBadString"); }
    }
    const root = value(); space();
    if (i < text.length) fail("jsonTextAfterEnd");
    return root;
  }
  function renderJSON(node, depth = 0) {
    const pad = "  ".repeat(depth + 1), end = "  ".repeat(depth);
    switch (node.t) {
      case "o": return node.items.length ? "{\n" + node.items.map(m => pad + JSON.stringify(m.k) + ": " + renderJSON(m.v, depth + 1)).join(",\n") + "\n" + end + "}" : "{}";
      case "a": return node.items.length ? "[\n" + node.items.map(v => pad + renderJSON(v, depth + 1)).join(",\n") + "\n" + end + "]" : "[]";
      case "s": return JSON.stringify(node.v);
      case "n": return node.v;
      case "b": return node.v ? "true" : "false";
      default: return "null";
    }
  }
  const numberPattern = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;
  // A member's path as the diff page writes it: `.key` for a plain name, `["a.b"]` for any other (a dot, a bracket, an
  // empty name), so two members never share a path.
  const memberPath = (path, key) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
  function treeEditor(textarea) {
    let root;
    try { root = parseJSON(textarea.value); } catch { return; } // not JSON: the textarea alone
    const tree = Object.assign(document.createElement("div"), { className: "json-tree json-editor" });
    const sync = () => { textarea.value = renderJSON(root); };
    const make = (tag, props = {}) => Object.assign(document.createElement(tag), props);
    // Paths are functions read when a label is written: a key renamed relabels every control below it (`relabel`), so
    // neither a screen reader nor the "not a number" alert names a member by a name it no longer has.
    let labels = [];
    const label = (element, attribute, text) => {
      const write = () => element.setAttribute(attribute, text());
      labels.push(write);
      write();
    };
    const relabel = () => labels.forEach(write => write());
    const button = (text, action) => {
      const b = make("button", { type: "button", textContent: text });
      b.addEventListener("click", action);
      return b;
    };
    function scalarControls(node, path, replace) {
      const span = make("span", { className: "scalar" });
      const kind = make("select");
      label(kind, "aria-label", () => say("typeOf", { path: path() }));
      for (const [value, label] of [["s", say("typeString")], ["n", say("typeNumber")], ["b", say("typeBoolean")], ["z", say("typeNull")]]) {
        kind.append(make("option", { value, textContent: label, selected: node.t === value }));
      }
      kind.addEventListener("change", () => {
        // The value carries over where it reads as the new type (14 becomes "14", "7" becomes 7, true "true").
        const text = node.t === "s" || node.t === "n" ? String(node.v) : node.t === "b" ? String(node.v) : "";
        const next = {
          s: { t: "s", v: text },
          n: { t: "n", v: numberPattern.test(text.trim()) ? text.trim() : node.t === "b" ? (node.v ? "1" : "0") : "0" },
          b: { t: "b", v: node.t === "b" ? node.v : node.t === "n" ? Number(node.v) !== 0 : text.trim() === "true" },
          z: { t: "z" },
        }[kind.value];
        // A value that reads as no number leaves the field empty, to be filled in, rather than a 0 the app would get.
        if (kind.value === "n" && !numberPattern.test(text.trim()) && node.t !== "b") next.blank = true;
        // The focus stays on the menu (WCAG 3.2.2): its arrow keys step through the types, each drawn as it is chosen.
        replace(next); sync(); draw(kind);
      });
      span.append(kind);
      if (node.t === "s" || node.t === "n") {
        // A text field holds one line (the browser drops a line break from its value): a string with one is edited in
        // a box of its lines, so what is sent keeps them.
        const lines = node.t === "s" && !node.blank ? String(node.v).split(/\r\n|\r|\n/).length : 1;
        const input = lines > 1 ? make("textarea", { rows: Math.min(lines, 8), value: node.v })
          : make("input", { type: "text", value: node.blank ? "" : node.v });
        label(input, "aria-label", () => say("valueOf", { path: path() }));
        label(input, "data-path", path);
        // A number field that holds no number keeps the form from being sent (`refuseInvalid`): what the app would get
        // is the field's text, or nothing.
        // (A box's value reads every line break as LF: a string that came with CRLF keeps them.)
        const crlf = lines > 1 && /\r\n/.test(String(node.v));
        const check = () => {
          const ok = node.t === "s" || numberPattern.test(input.value.trim());
          input.setAttribute("aria-invalid", String(!ok));
          if (ok) { node.v = node.t === "n" ? input.value.trim() : crlf ? input.value.replace(/\r?\n/g, "\r\n") : input.value; sync(); }
        };
        input.addEventListener("input", check);
        // Typed next (an item just added), unless the change was made from elsewhere (a type menu keeps the focus).
        if (node.blank) { delete node.blank; check(); input.dataset.focus = ""; }
        span.append(input);
      } else if (node.t === "b") {
        const flag = make("select");
        label(flag, "aria-label", () => say("valueOf", { path: path() }));
        flag.append(make("option", { value: "true", textContent: "true", selected: node.v }),
                    make("option", { value: "false", textContent: "false", selected: !node.v }));
        flag.addEventListener("change", () => { node.v = flag.value === "true"; sync(); });
        span.append(flag);
      }
      return span;
    }
    function nodeView(node, path, depth, replace) {
      if (node.t !== "o" && node.t !== "a") return scalarControls(node, path, replace);
      const details = make("details", { open: depth < 2 });
      // Named by its path, as the editor's other controls are: "{6}" alone, five times over, tells a screen reader nothing.
      const summary = make("summary");
      const named = make("span", { className: "visually-hidden" });
      labels.push(() => { named.textContent = `${path()} `; });
      named.textContent = `${path()} `;
      summary.append(named, node.t === "o" ? `{${node.items.length}}` : `[${node.items.length}]`);
      details.append(summary);
      const list = make("ul");
      node.items.forEach((item, index) => {
        const li = make("li");
        if (node.t === "o") {
          const key = make("input", { type: "text", value: item.k, className: "key" });
          label(key, "aria-label", () => say("keyIn", { key: item.k, path: path() }));
          // A key just added is focused with its name selected: typing replaces it.
          if (item.fresh) { delete item.fresh; key.dataset.focus = "select"; }
          key.addEventListener("input", () => { item.k = key.value; sync(); });
          // Relabelled once the name is settled, not at each key: a name changing as it is typed would be read again.
          key.addEventListener("change", relabel);
          li.append(key, ": ");
        } else {
          li.append(make("span", { className: "key", textContent: `[${index}] ` }));
        }
        const value = node.t === "o" ? nodeView(item.v, () => memberPath(path(), item.k), depth + 1, next => { item.v = next; })
          : nodeView(item, () => `${path()}[${index}]`, depth + 1, next => { node.items[index] = next; });
        const remove = button("×", () => {
          // The focus goes to the next member's ×, or to the Add of this object or array after its last.
          node.items.splice(index, 1); node.removedAt = index; sync(); draw();
        });
        label(remove, "aria-label", () => node.t === "o" ? say("removeKey", { key: item.k, path: path() })
          : say("removeItem", { index, path: path() }));
        if (node.removedAt === index) remove.dataset.focus = "";
        // A member's × comes before an object or array it holds, so the keyboard reaches it without going through
        // the whole subtree; after a value on one line, at its end.
        if (value.tagName === "DETAILS") li.append(remove, " ", value); else li.append(value, " ", remove);
        list.append(li);
      });
      const add = make("li");
      const visible = say(node.t === "o" ? "addKey" : "addItem");
      const adding = button(visible, () => {
        if (node.t === "o") node.items.push({ k: "newKey", v: { t: "s", v: "" }, fresh: true }); else node.items.push({ t: "s", v: "", blank: true });
        sync(); draw();
      });
      // Its name starts with what it shows (WCAG 2.5.3: "click key" reaches it), then where it adds.
      label(adding, "aria-label", () => `${visible} — ${say("addTo", { path: path() })}`);
      if (node.removedAt !== undefined && node.removedAt >= node.items.length) adding.dataset.focus = "";
      delete node.removedAt;
      add.append(adding);
      list.append(add);
      details.append(list);
      return details;
    }
    // `staying`: the control the change was made with, whose place in the new tree takes the focus back.
    function draw(staying) {
      const hadFocus = tree.contains(document.activeElement);
      const controls = () => [...tree.querySelectorAll("summary, input, select, textarea, button")];
      const place = staying ? controls().indexOf(staying) : -1;
      labels = [];
      tree.replaceChildren(nodeView(root, () => "$", 0, next => { root = next; }));
      // The field a change asks to be filled next (a key added, a value to type) takes the focus.
      const next = place >= 0 ? controls()[place] : tree.querySelector("[data-focus]");
      if (next && hadFocus) {
        for (let open = next.closest("details"); open; open = open.parentElement.closest("details")) open.open = true;
        next.focus();
        if (next.dataset.focus === "select") next.select();
      }
      tree.querySelectorAll("[data-focus]").forEach(field => delete field.dataset.focus);
    }
    // Sent only when every number field holds a number: else the first such field is named and focused, nothing sent.
    const alert = make("p", { className: "banner error" });
    alert.setAttribute("role", "alert");
    alert.hidden = true;
    textarea.form?.addEventListener("submit", event => {
      const invalid = tree.hidden ? null : tree.querySelector("input[aria-invalid=true]");
      alert.hidden = !invalid;
      if (!invalid) return;
      event.preventDefault();
      event.stopImmediatePropagation();
      alert.textContent = say("notANumber", { path: invalid.dataset.path });
      for (let open = invalid.closest("details"); open; open = open.parentElement.closest("details")) open.open = true;
      invalid.focus();
    });
    // Tree or text: switching to the tree reads the text again, so an edit made as text is kept.
    const toggle = make("button", { type: "button", textContent: say("editAsText") });
    toggle.addEventListener("click", () => {
      const showingTree = !tree.hidden;
      if (!showingTree) {
        try { root = parseJSON(textarea.value); } catch (error) { toggle.textContent = say("notJSON", { reason: say(error.words), position: error.position + 1 }); return; }
        draw();
      }
      tree.hidden = showingTree; textarea.parentElement.hidden = !showingTree;
      toggle.textContent = say(showingTree ? "editAsTree" : "editAsText");
    });
    textarea.parentElement.hidden = true;
    textarea.parentElement.before(toggle, alert, tree);
    draw();
  }
  const bodyEditor = $("form.pause-editor textarea[name=body]");
  if (bodyEditor) treeEditor(bodyEditor);

  // 6b: an editor with changes not sent (a paused exchange's, the composer's, a rule's) asks before the page is left
  // or reloaded: the work is in the page alone. Any form sent from the page is the developer's choice, and leaves freely.
  let unsent = false;
  for (const editor of $$("form.pause-editor")) {
    editor.addEventListener("input", () => { unsent = true; });
    editor.addEventListener("change", () => { unsent = true; });
  }
  document.addEventListener("submit", event => { if (!event.defaultPrevented) unsent = false; });
  window.addEventListener("beforeunload", event => {
    if (!unsent) return;
    event.preventDefault();
    event.returnValue = "";
  });

  // 7: the proxy page's counts, read again from its JSON every 2 s while the page is shown.
  const proxyCounts = $("#proxy-counts[data-source]");
  if (proxyCounts) {
    setInterval(async () => {
      if (document.hidden) return;
      try {
        const response = await fetch(proxyCounts.dataset.source, { credentials: "same-origin", cache: "no-store" });
        if (!response.ok) return;
        const { counts } = await response.json();
        for (const cell of proxyCounts.querySelectorAll("[data-count-name]")) {
          const value = counts?.[cell.dataset.countName];
          if (typeof value === "number") cell.textContent = String(value);
        }
      } catch { /* the next round tries again */ }
    }, 2000);
  }

  // 7b: what cannot be undone (the whole log or cache cleared, marked data-confirm) is asked first, before any other
  // handler sends the form (this one listens as the event goes down; a "no" stops it there).
  document.addEventListener("submit", event => {
    const form = event.target;
    if (form instanceof HTMLFormElement && form.dataset.confirm && !window.confirm(form.dataset.confirm)) {
      event.preventDefault();
      event.stopImmediatePropagation();
    }
  }, true);

  // 8: a form whose answer is a page the console shows again (the proxy cache's switches, clears and removes, marked
  // data-in-place with that page's address): sent from here, and that page shown in place of the one the press was made
  // on, so that Back leaves the page at once, never through each press, nor to an answer just removed. A form the
  // server refuses (a stale page's switch) is sent again as a form, whose answer page says why; nothing changed.
  document.addEventListener("submit", async event => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.dataset.inPlace || event.defaultPrevented) return;
    event.preventDefault();
    const target = new URL(form.dataset.inPlace, location.href);
    try {
      const response = await fetch(form.action, { method: "POST", credentials: "same-origin", redirect: "follow",
                                                  body: new URLSearchParams(new FormData(form, event.submitter)) });
      if (response.ok && response.redirected) {
        // An address that differs from this one by its fragment alone would only scroll: it is read again instead.
        if (target.pathname === location.pathname && target.search === location.search) {
          history.replaceState(history.state, "", target.href);
          location.reload();
        } else {
          location.replace(target.href);
        }
        return;
      }
    } catch { /* sent as a form below */ }
    form.submit();
  });

  // 9: where the focus starts after a form's answer: on what it is about — a refusal's reason (a 422 or 403 shown with
  // its form), else the row the answer's address names (a rule or a mock saved: /debug/rules#rule-3) — not at the top
  // of the page, where a keyboard or a screen reader would start over.
  function focusAnswer() {
    const refusal = $("main [role=alert].banner.error, main .banner.error[role=alert]");
    const target = refusal || (location.hash.length > 1 && document.getElementById(decodeURIComponent(location.hash.slice(1))));
    if (!target || target.contains(document.activeElement)) return;
    if (!target.matches("a, button, input, select, textarea, [tabindex]")) target.setAttribute("tabindex", "-1");
    target.focus({ preventScroll: !refusal });
  }

  follow();
  localTimes();
  copyButtons();
  drawWaterfall();
  focusAnswer();
})();
