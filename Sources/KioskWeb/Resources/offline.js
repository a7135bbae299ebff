// The page's side of reading with the Kiosk server unreachable: registers the service worker (sw.js), says
// when a page comes from this device ("Kiosk is unreachable — showing what this device saved 12 min ago"),
// shows edits still waiting in the outbox, offers a new version of the app shell, runs the storage panel and
// the offline page's list, and saves for offline in the background. Storage itself is device.js's.
// Without service workers (no secure context, an old browser) none of this runs and Kiosk works as a site.

(() => {
  "use strict";

  const device = self.KioskDevice, client = self.KioskClient;
  if (!("serviceWorker" in navigator) || !window.isSecureContext || !device || !client) return;
  const routes = client.routes;

  const strings = {};
  try { Object.assign(strings, JSON.parse(document.body.dataset.strings || "{}")); } catch { /* English below */ }
  const say = (name, values = {}) => (strings[name] || name).replace(/\{(\w+)\}/g, (_, key) => String(values[key] ?? ""));
  const $ = (selector, root = document) => root.querySelector(selector);
  const $$ = (selector, root = document) => [...root.querySelectorAll(selector)];
  const pathAndQuery = url => { const u = new URL(url || location.href, location.href); return u.pathname + u.search; };
  const language = document.documentElement.lang || "en";
  const main = $("#main");

  // "12 min ago", "hace 3 h", said as app.js says every age (and, in an element, kept current as time passes).
  const ago = time => window.kiosk?.ago(time) ?? "";
  // A sentence of `name`'s with its {ago} as a <time> app.js keeps current: the banner of a page left open offline
  // does not go on saying what it said when it came.
  function agoSentence(name, time, values = {}) {
    const marker = "\u0001", [before, after] = say(name, { ...values, ago: marker }).split(marker);
    if (after === undefined || !window.kiosk) return say(name, { ...values, ago: ago(time) });
    return [before, window.kiosk.agoElement(time), after];
  }
  const megabytes = bytes => new Intl.NumberFormat(language, { style: "unit", unit: "megabyte", maximumFractionDigits: 1 })
    .format(bytes / (1024 * 1024));

  // A banner at the top of the content, created on demand and removed when empty; they keep this order.
  const bannerOrder = ["unreachable-banner", "pending-edits", "failed-edits"];
  function banner(id, className, content) {
    let element = document.getElementById(id);
    if (!content) return void element?.remove();
    if (!element) {
      element = Object.assign(document.createElement("p"), { id, className: `banner ${className}` });
      element.setAttribute("role", "status");
      const after = bannerOrder.slice(0, bannerOrder.indexOf(id)).map(other => document.getElementById(other)).filter(Boolean).pop();
      if (after) after.after(element); else main?.prepend(element);
    }
    if (typeof content === "string") element.textContent = content; else element.replaceChildren(...content);
  }

  // Kiosk unreachable ----------------------------------------------------------------------------------

  // Set by the worker on a page it served from this device (0 on the offline page, which says so itself).
  let savedAt = document.body.dataset.savedAt === undefined ? null : Number(document.body.dataset.savedAt);
  // "slow": Kiosk did not answer in time (it may be up, waiting for a slow catalog); else it did not answer at all.
  function showUnreachable(time, reason = document.body.dataset.savedReason) {
    savedAt = time;
    const words = { slow: "slow", loaded: "unreachableLoaded" }[reason] || "unreachable";
    if (time > 0) {
      banner("unreachable-banner", "unreachable", agoSentence(words, time));
      // A page saved while the catalog's upstream was offline carries Kiosk's banner of then ("Offline — showing saved
      // data from 2 min ago"): beside this one it is a second, older word on the same page; this one is what holds now.
      for (const old of $$("main .banner.offline")) old.remove();
    }
    window.kiosk?.watchConnectivity();
    markUnsaved();
  }

  // With Kiosk unreachable, a list's rows whose page this device has not saved say so, before a tap finds out: what
  // the background saving keeps is each catalog's first page, and a list read further or searched shows rows of items
  // never opened; an item's page lists its linked items (an episode's cast, a location's residents) as rows too. The
  // words are the link's own, so a screen reader says them with the row.
  async function markUnsaved() {
    for (const link of $$("#main ul.items li > a[href]")) {
      const href = link.getAttribute("href");
      if (!href.startsWith("/") || href.startsWith("//") || link.querySelector(".not-saved")) continue;
      if (await device.has("page", href).catch(() => true)) continue;
      // (Asked again after the wait: the list's updates and the banner each mark the rows, and two passes at once
      // would both find a row unmarked before either marked it.)
      if (savedAt === null) return;
      if (link.querySelector(".not-saved")) continue;
      link.closest("li").classList.add("unsaved");
      (link.querySelector(".text") || link).append(Object.assign(document.createElement("span"), { className: "not-saved", textContent: say("notSaved") }));
    }
  }
  function unmarkUnsaved() {
    for (const note of $$("#main .not-saved")) { note.closest("li")?.classList.remove("unsaved"); note.remove(); }
  }
  // Rows that come later while Kiosk is unreachable (a saved next page appended after the worker said so) are marked too.
  document.addEventListener("kiosk:updated", () => { if (savedAt !== null) markUnsaved(); });
  // While the banner shows, app.js's one connectivity poller asks whether Kiosk answers again; when it does, the
  // banner goes, what waits is sent, and the list is fetched again.
  window.kiosk?.onConnectivity("kiosk-unreachable", {
    active: () => savedAt !== null,
    changed: state => {
      if (state === "unreachable") return;
      // The device's page for one it never saved, at that page's address: now that Kiosk answers, the page itself —
      // once a minute at most (a page slower than the worker's wait comes back as this one: then Retry is the reader's).
      if ($("main[data-view=offline]")) {
        const key = "kiosk-offline-reload " + location.href, last = Number(sessionStorage.getItem(key) || 0);
        if (Date.now() - last > 60000) {
          sessionStorage.setItem(key, String(Date.now()));
          flush();
          location.reload();
        }
        return;
      }
      savedAt = null;
      delete document.body.dataset.savedAt;
      banner("unreachable-banner", "", "");
      unmarkUnsaved();
      flush();
      if ($("#results")) window.kiosk?.reloadResults();
    },
  });
  window.addEventListener("online", () => { flush(); window.kiosk?.watchConnectivity({ now: true }); });
  // Kiosk going away while a page is read (the laptop asleep, the server stopped, the phone off the network) is noticed
  // without a tap: every 30 s while the page shows, and at once when the device says it went offline, Kiosk's
  // connectivity answer (which asks no catalog) is asked for. No answer shows the banner, what is on the screen being
  // what was loaded; the poller above then watches for Kiosk's return.
  const loadedAt = Date.now();
  async function checkKiosk() {
    if (savedAt !== null || document.hidden || !navigator.serviceWorker.controller) return;
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), 5000);
    try {
      await fetch(routes.connectivity, { credentials: "same-origin", cache: "no-store", signal: abort.signal,
        headers: { Accept: "application/json" } });
    } catch {
      if (savedAt === null) showUnreachable(loadedAt, "loaded");
    } finally {
      clearTimeout(timer);
    }
  }
  setInterval(checkKiosk, 30000);
  window.addEventListener("offline", checkKiosk);

  // Edits waiting in the outbox -------------------------------------------------------------------------

  const flush = () => navigator.serviceWorker.controller?.postMessage({ type: "flush" });

  function setStar(form, on, waiting) {
    const action = $("input[name=action]", form), button = $("button", form);
    if (!action || !button) return;
    action.value = on ? "remove" : "add";
    button.textContent = form.dataset[on ? "symbolOn" : "symbolOff"] || button.textContent;
    button.setAttribute("aria-pressed", String(on));
    const label = form.dataset.label;
    if (label) button.setAttribute("aria-label", waiting ? `${label} (${say("pending")})` : label);
    form.classList.toggle("pending", waiting);
  }

  // The list of this page if it is one its user orders, of `source` (the dogs).
  const orderedList = source => main?.dataset.ordering === "user" && main.dataset.source === source ? $("#results ul.items") : null;
  const row = (list, id) => list && $$(":scope > li", list).find(li => li.dataset.id === id);

  // Shows every edit still waiting, in order, over the page Kiosk (or this device) rendered: a change made on
  // this device wins over what the page says until it is sent (as NetNewsWire does). What each shows is the
  // effect the worker gave it when it queued it (from the client table).
  let applying = Promise.resolve();
  function applyPending() {
    applying = applying.then(async () => {
      let writes;
      try { writes = await device.pending(); } catch { return; }
      // A list that showed edits already keeps them (and their marks): each edit is shown once on the rows as the page
      // showed them then, since a move names a place among them (applied again after a later deletion, it would land a
      // place further). A list swapped in since is as Kiosk or this device saved it, and shows them all.
      for (const element of $$("form.star.pending, ul.items:not([data-shown-edits]) > li.pending")) element.classList.remove("pending");
      const lists = new Set();
      // A deletion taken back later in the queue (Undo while unreachable) shows as neither.
      const restored = writes.map((write, index) => write.effect?.kind === "restore" ? { index, ...write.effect } : null).filter(Boolean);
      const undone = (effect, index) => restored.some(r => r.index > index && r.source === effect.source && r.id === effect.id);
      // The lists whose Reset waits: their original order is Kiosk's to give, so they say so rather than look untouched.
      const resetWaits = new Set();
      for (const [index, write] of writes.entries()) {
        const effect = write.effect || {};
        if (effect.kind === "reset") resetWaits.add(effect.source);
        if (effect.kind === "remove" && undone(effect, index)) continue;
        const list = orderedList(effect.source);
        if (list && effect.kind !== "star" && Number(list.dataset.shownEdits || 0) >= write.seq) continue;
        if (effect.kind === "star") {
          for (const star of $$("form.star")) if (star.getAttribute("action") === write.path) setStar(star, effect.on, true);
        } else if (effect.kind === "remove") {
          row(list, effect.id)?.remove();
        } else if (effect.kind === "move") {
          const moved = row(list, effect.id);
          if (moved) {
            moved.remove();
            const rows = $$(":scope > li", list), to = Math.min(effect.to || 0, rows.length);
            if (to === rows.length) list.append(moved); else rows[to].before(moved);
            moved.classList.add("pending");
          }
        }
        if (list) lists.add(list);
      }
      const ordered = main?.dataset.ordering === "user" ? $("#results ul.items") : null;
      let note = $("#reset-pending");
      if (ordered && resetWaits.has(main.dataset.source)) {
        if (!note) {
          note = document.createElement("p");
          note.id = "reset-pending";
          note.className = "status pending";
          note.setAttribute("role", "status");
          ordered.before(note);
        }
        note.textContent = say("resetPending");
      } else {
        note?.remove();
      }
      await showStarredHere(writes);
      const last = writes.length ? writes[writes.length - 1].seq : 0;
      for (const list of lists) {
        list.dataset.shownEdits = String(Math.max(last, Number(list.dataset.shownEdits || 0)));
        renumberMoves(list);
      }
      showFailures(await device.takeFailures().catch(() => []));
      const refused = writes[0]?.refused ? " " + say("pendingRefused", { reason: writes[0].refused }) : "";
      banner("pending-edits", "outbox", writes.length === 0 ? "" : say(writes.length === 1 ? "pendingOne" : "pendingMany", { n: writes.length }) + refused);
    });
    return applying;
  }

  // On the Favorites page (as Kiosk or this device gave it), an item starred on this device and not yet taken by Kiosk
  // is among its catalog's favorites, marked waiting: its row made from its own page as this device saved it (the one
  // copy of its title and picture here), without a star of its own (its item's page has one). An item unstarred here
  // shows its star off (above); a row added here goes when its star is taken back.
  async function showStarredHere(writes) {
    if (main?.dataset.view !== "favorites" || !$("#results")) return;
    // The last star of each item decides: starred, then unstarred, is neither.
    const stars = new Map();
    for (const write of writes) if (write.effect?.kind === "star") stars.set(write.path, write.effect);
    for (const row of $$("#results li.starred-here")) {
      if (stars.get(row.dataset.starPath)?.on) continue;
      const group = row.closest("section.favorites-group");
      row.remove();
      if (group && !group.querySelector("li")) group.remove();
    }
    for (const [path, effect] of stars) {
      if (!effect.on || $$("#results form.star").some(form => form.getAttribute("action") === path)
          || $$("#results li.starred-here").some(row => row.dataset.starPath === path)) continue;
      const href = `/${encodeURIComponent(effect.source)}/${encodeURIComponent(effect.id)}`;
      let page = null;
      try {
        const saved = await device.saved("page", href);
        if (saved) page = new DOMParser().parseFromString(await saved.response.text(), "text/html");
      } catch { /* made from what the write says */ }
      const title = page?.querySelector("main h1")?.textContent.trim() || effect.id;
      const picture = page?.querySelector("main img[src]");
      const row = Object.assign(document.createElement("li"), { className: "pending starred-here" });
      row.dataset.id = effect.id;
      row.dataset.starPath = path;
      const link = Object.assign(document.createElement("a"), { href });
      if (picture) link.append(Object.assign(document.createElement("img"), { src: picture.getAttribute("src"), alt: "", width: 64, height: 64 }));
      const text = Object.assign(document.createElement("span"), { className: "text" });
      text.append(Object.assign(document.createElement("span"), { className: "title", textContent: title }),
                  Object.assign(document.createElement("span"), { className: "subtitle", textContent: say("pending") }));
      link.append(text);
      row.append(link);
      // In its catalog's group, named as the tabs name the catalog; a group of its own when it is the catalog's first.
      const tab = $$("a[href]").find(a => a.getAttribute("href") === `/${effect.source}`);
      const name = (tab?.querySelector(".long") || tab)?.textContent.trim() || effect.source;
      let group = $$("#results section.favorites-group").find(section => section.getAttribute("aria-label") === name);
      if (!group) {
        group = Object.assign(document.createElement("section"), { className: "favorites-group" });
        group.setAttribute("aria-label", name);
        group.append(Object.assign(document.createElement("h2"), { textContent: name }),
                     Object.assign(document.createElement("ul"), { className: "items" }));
        $("#results").append(group);
        $("#results p.empty")?.remove();
      }
      $("ul.items", group)?.prepend(row);
    }
  }

  // The editor's Move up / Move down forms name a position: after a local delete or move they must name the
  // rows as this device shows them, or the next move would land elsewhere; and a row shows the buttons of the place it
  // has now (none up for the first, none down for the last), which every row's page holds, hidden where they do not apply.
  function renumberMoves(list) {
    if (!list?.classList.contains("edit")) return;
    const rows = $$(":scope > li", list);
    rows.forEach((li, index) => {
      for (const form of $$("form.move", li)) {
        const up = form.dataset.direction === "up";
        const field = $("input[name=to]", form);
        if (field) field.value = String(up ? Math.max(0, index - 1) : index + 1);
        form.hidden = up ? index === 0 : index === rows.length - 1;
      }
    });
  }
  document.addEventListener("kiosk:updated", applyPending);

  // A star outside the lists (a detail's) is sent with fetch too, as app.js sends the lists' writes: the worker queues
  // only writes a page of Kiosk sends with fetch, never a form's own POST, which any site can make (sw.js). The star of
  // the page it returns to takes this one's place, the focus on it and the reader's place kept; when that page has none
  // (or nothing came), that page is opened.
  document.addEventListener("submit", async event => {
    const form = event.target;
    if (event.defaultPrevented || !navigator.serviceWorker.controller || !form.matches("form.star[method=post]")
        || form.closest("#results")) return;
    event.preventDefault();
    const asked = $("input[name=return]", form)?.value || "";
    const back = /^\/(?![\/\\])/.test(asked) ? asked : location.pathname + location.search;
    const action = form.getAttribute("action");
    try {
      const answer = await fetch(action, {
        method: "POST", body: new URLSearchParams(new FormData(form)), credentials: "same-origin", headers: { Accept: "text/html" },
      });
      const doc = new DOMParser().parseFromString(await answer.text(), "text/html");
      const fresh = answer.ok && $$("form.star[method=post]", doc).find(star => star.getAttribute("action") === action && !star.closest("#results"));
      // The page it returns to is this one (Kiosk's redirect followed), or the worker's answer in its place when Kiosk is
      // out of reach (under the write's own address).
      if (fresh && [pathAndQuery(location.href), action].includes(pathAndQuery(answer.url))) {
        form.replaceWith(document.adoptNode(fresh));
        $("button", fresh)?.focus();
        await applyPending();
        return;
      }
    } catch { /* the page is opened below */ }
    location.assign(back);
  });

  // Writes Kiosk refused: told to the tab that made them (the worker's message), else, made by a tab since closed, to the
  // next one that looks (the device's record).
  function showFailures(failures) {
    if (!failures.length) return;
    banner("failed-edits", "error", say(failures.length === 1 ? "failedOne" : "failedMany",
                                        { n: failures.length, reason: failures[failures.length - 1].reason }));
  }

  navigator.serviceWorker.addEventListener("message", event => {
    const message = event.data || {};
    if (message.type === "unreachable") showUnreachable(message.savedAt, message.reason);
    if (message.type === "failed") showFailures(message.failures || []);
    if (message.type === "outbox") {
      applyPending();
      // What Kiosk now holds replaces what this device showed.
      if (message.sent && $("#results") && savedAt === null) window.kiosk?.reloadResults();
    }
  });

  // A new version of the app shell -------------------------------------------------------------------------

  let reloadAsked = false;
  function offerUpdate(worker) {
    if (!navigator.serviceWorker.controller || document.getElementById("update-bar")) return;
    const bar = Object.assign(document.createElement("div"), { id: "update-bar", className: "update-bar" });
    bar.setAttribute("role", "status");
    const button = Object.assign(document.createElement("button"), { type: "button", textContent: say("reload") });
    button.addEventListener("click", () => {
      reloadAsked = true;
      button.disabled = true;
      // Saving for offline stops (the new version saves again): Chromium activates the new worker only once
      // the old one has no fetch in flight, and saving keeps it busy for as long as it runs.
      saving = false;
      worker.postMessage({ type: "skip-waiting" });
    });
    bar.append(Object.assign(document.createElement("span"), { textContent: say("newVersion") }), " ", button);
    document.body.append(bar);
  }
  // Only a reload the person asked for: the first install also changes the controller.
  navigator.serviceWorker.addEventListener("controllerchange", () => { if (reloadAsked) location.reload(); });

  async function register() {
    const registration = await navigator.serviceWorker.register(routes.serviceWorker, { scope: routes.home });
    if (registration.waiting) offerUpdate(registration.waiting);
    registration.addEventListener("updatefound", () => {
      const worker = registration.installing;
      worker?.addEventListener("statechange", () => { if (worker.state === "installed") offerUpdate(worker); });
    });
    document.addEventListener("visibilitychange", () => { if (!document.hidden) registration.update().catch(() => {}); });
    return registration;
  }

  // Saving for offline -------------------------------------------------------------------------------------

  const saveInterval = 30 * 60 * 1000;
  let saving = false;

  // Runs `work` over `items`, three at a time.
  async function pool(items, work) {
    const queue = [...items];
    await Promise.all([0, 1, 2].map(async () => {
      while (queue.length && saving) await work(queue.shift()).catch(() => {});
    }));
  }

  // Page 1 of each catalog and the favorites, their details, and every picture they show: fetched through the
  // worker, which keeps them. At most every half hour, unless asked.
  async function saveForOffline(force = false) {
    if (saving || savedAt !== null || !navigator.serviceWorker.controller) return;
    if (!(await device.setting("saveForOffline", true))) return;
    // Pages are saved in the language they were read in: after a switch of language the device saves them again, so
    // that, Kiosk unreachable, they read in the language chosen (they read in the old one until then).
    const language = document.documentElement.lang;
    const sameLanguage = (await device.setting("savedLanguage", language)) === language;
    if (!force && sameLanguage && Date.now() - (await device.setting("savedAt", 0)) < saveInterval) return;
    const run = async () => {
      saving = true;
      // What the device saves should outlive the browser's clean-ups when space runs low (Chromium decides
      // without asking; Safari and Firefox may ask once).
      await navigator.storage?.persist?.().catch(() => false);
      const pages = new Set(), pictures = new Set();
      let done = 0, total = 0;
      const progress = () => { if (saving) usage(say("saving", { done, total })); };
      // This page too (the first one seen was loaded before the worker was there to keep it), unless it is an
      // error page: there is nothing to keep, and asking again would only log its failure once more.
      const here = main?.dataset.view === "error" ? [] : [location.pathname + location.search];
      const lists = [...new Set([...here, routes.home,
                                 ...$$("nav.tabs a[href]").map(link => link.getAttribute("href"))])];
      const fetchPage = async url => {
        const response = await fetch(url, { headers: { Accept: "text/html" }, credentials: "same-origin" });
        if (!response.ok) throw new Error(String(response.status));
        const doc = new DOMParser().parseFromString(await response.text(), "text/html");
        for (const img of $$(`img[src^="${routes.image}?"]`, doc)) pictures.add(img.getAttribute("src"));
        return doc;
      };
      total = lists.length;
      await pool(lists, async url => {
        try {
          const doc = await fetchPage(url);
          // Its items, and the editor of a list the reader orders (the dogs): edits made offline go to the outbox, but
          // only from an editor this device has saved.
          for (const link of $$("#results ul.items li > a[href], main p.mode a[href]", doc)) {
            const href = link.getAttribute("href");
            if (href.startsWith("/") && !href.startsWith("//")) pages.add(href);
          }
        } finally { done += 1; progress(); }
      });
      total += pages.size;
      await pool(pages, url => fetchPage(url).finally(() => { done += 1; progress(); }));
      total += pictures.size;
      await pool(pictures, url => fetch(url, { credentials: "same-origin" }).finally(() => { done += 1; progress(); }));
      const finished = saving;
      saving = false;
      if (finished) {
        await device.setSetting("savedAt", Date.now());
        await device.setSetting("savedLanguage", language);
      }
      showUsage();
    };
    if (navigator.locks) await navigator.locks.request("kiosk-save-for-offline", { ifAvailable: true }, lock => lock && run());
    else await run();
  }

  // The storage panel (home page) ----------------------------------------------------------------------

  const usage = text => { const element = $("#device-usage"); if (element) element.textContent = text; };

  async function showUsage(extra = "") {
    const panel = $("#device");
    if (!panel || saving) return;
    const [totals, limit, last, persisted] = await Promise.all([
      device.totals(), device.limit(), device.setting("savedAt", 0),
      navigator.storage?.persisted?.().catch(() => false) ?? false,
    ]);
    usage([
      extra,
      say("holds", { size: megabytes(totals.bytes), limit: megabytes(limit),
                     pages: totals.pages === 1 ? say("pageOne") : say("pageMany", { n: totals.pages }),
                     images: totals.images === 1 ? say("pictureOne") : say("pictureMany", { n: totals.images }) }),
      last ? say("savedAgo", { ago: ago(last) }) : say("neverSaved"),
      say(persisted ? "persisted" : "notPersisted"),
    ].filter(Boolean).join(" "));
  }

  async function setUpPanel() {
    const panel = $("#device");
    if (!panel) return;
    const toggle = $("#save-offline", panel), limit = $("#device-limit", panel), clear = $("#device-clear", panel);
    toggle.checked = await device.setting("saveForOffline", true);
    const megabytesLimit = String(Math.round((await device.limit()) / (1024 * 1024)));
    if ($$("option", limit).some(option => option.value === megabytesLimit)) limit.value = megabytesLimit;
    panel.hidden = false;
    toggle.addEventListener("change", async () => {
      await device.setSetting("saveForOffline", toggle.checked);
      if (toggle.checked) {
        await navigator.storage?.persist?.().catch(() => false);
        saveForOffline(true);
      } else {
        saving = false;
      }
      showUsage();
    });
    limit.addEventListener("change", async () => {
      await device.setSetting("limitBytes", Number(limit.value) * 1024 * 1024);
      await device.evict();
      showUsage();
    });
    clear.addEventListener("click", async () => {
      saving = false;
      await device.clear();
      showUsage(say("cleared"));
    });
    showUsage();
  }

  // The offline page: what this device has saved, by catalog, most recently read first -----------------------

  async function listSaved() {
    const list = $("#saved-pages");
    if (!list) return;
    // Kiosk's groups, one a tab and a last for the rest (`data-prefix` empty): a page goes to its tab's by its path.
    const groups = $$("section.saved-group", list);
    const groupOf = url => {
      const path = url.split(/[?#]/)[0];
      return groups.find(group => group.dataset.prefix && (path === group.dataset.prefix || path.startsWith(group.dataset.prefix + "/")))
        || groups.find(group => !group.dataset.prefix);
    };
    const pages = (await device.entries("page"))
      .filter(entry => entry.url.startsWith("/") && !entry.url.startsWith("//") && entry.url !== routes.offline)
      .sort((a, b) => b.usedAt - a.usedAt);
    // Named by their titles without the site's name every one ends with ("Charlie · Kiosk": Kiosk's own page lists them).
    const named = entry => (entry.title || "").replace(/\s+·\s+Kiosk$/, "");
    // Pages of one title (a catalog's pages 1 to 5, a list and its edit mode) are told apart by their addresses.
    const titles = new Map();
    for (const entry of pages) titles.set(named(entry), (titles.get(named(entry)) || 0) + 1);
    const row = entry => {
      const item = document.createElement("li");
      const link = Object.assign(document.createElement("a"), { href: entry.url, textContent: named(entry) || entry.url });
      const when = Object.assign(document.createElement("span"), { className: "hint" });
      if (named(entry) && titles.get(named(entry)) > 1) {
        let address = entry.url;
        try { address = decodeURI(entry.url); } catch { /* shown as saved */ }
        when.append(" · ", Object.assign(document.createElement("code"), { textContent: address }));
      }
      when.append(" · ", window.kiosk ? window.kiosk.agoElement(entry.savedAt) : ago(entry.savedAt));
      item.append(link, when);
      return item;
    };
    for (const group of groups) {
      const mine = pages.filter(entry => groupOf(entry.url) === group);
      $("ul", group).replaceChildren(...mine.map(row));
      group.hidden = mine.length === 0;
    }
    const empty = $("#no-saved-pages");
    if (empty) empty.hidden = pages.length > 0;
  }

  // Start ------------------------------------------------------------------------------------------------

  if (savedAt !== null) showUnreachable(savedAt);
  $("#retry-page")?.addEventListener("click", () => location.reload());
  applyPending();
  listSaved();
  setUpPanel();
  register().then(async () => {
    if (savedAt !== null) return;
    // On the first visit the worker takes this page over once it is active (clients.claim).
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) {
      await new Promise(resolve => {
        navigator.serviceWorker.addEventListener("controllerchange", resolve, { once: true });
        setTimeout(resolve, 5000);
      });
    }
    flush();
    // Once the page has settled: saving competes with nothing the person is waiting for.
    const later = window.requestIdleCallback || (callback => setTimeout(callback, 1000));
    setTimeout(() => later(() => saveForOffline()), 2000);
  }).catch(() => { /* no worker: Kiosk works as a site */ });
})();
