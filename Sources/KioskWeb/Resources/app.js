// Kiosk's script for every page: progressive enhancement only. One IIFE, no dependencies; whenever
// something fails, the plain links and forms still work. The network debugger's parts are in debug.js,
// which only /debug pages load.

(() => {
  "use strict";

  // UI strings come localized from the server; English if the attribute is missing or broken.
  const strings = { imageUnavailable: "Image unavailable", loading: "Loading…",
    filtering: "Filtering the rows shown; type 3 or more characters to search", loadFailed: "Could not load.",
    filteringUnreachable: "Kiosk is unreachable: filtering the rows shown; searching needs Kiosk.", noMatches: "No matches.",
    ago: "{age} ago", justNow: "just now" };
  try { Object.assign(strings, JSON.parse(document.body.dataset.strings || "{}")); } catch { /* keep English */ }

  const $ = (selector, root = document) => root.querySelector(selector);
  const $$ = (selector, root = document) => [...root.querySelectorAll(selector)];
  const withoutHash = url => url.split("#")[0];

  // "12 min ago", "hace 3 h": an age as the pages say it (the client table's steps, Age.steps in Swift, and the
  // page's words). Every <time class="ago" datetime> on the page is said again as time passes and whenever the page
  // shows: a page left open, or kept on the device and opened offline days later, does not go on saying "just now".
  function ago(time) {
    const seconds = Math.max(0, (Date.now() - time) / 1000);
    const step = self.KioskClient.ages.find(step => step.below === undefined || seconds < step.below);
    return step.unit === "justNow" ? strings.justNow
      : strings.ago.replace("{age}", `${Math.floor(seconds / step.divisor)} ${step.symbol}`);
  }
  // A <time class="ago"> saying how long ago `time` (ms since 1970) was, kept current like the server's.
  function agoElement(time) {
    const element = Object.assign(document.createElement("time"), { className: "ago", dateTime: new Date(time).toISOString() });
    element.textContent = ago(time);
    return element;
  }
  function refreshAges() {
    for (const element of $$("time.ago[datetime]")) {
      const time = Date.parse(element.dateTime);
      const text = Number.isNaN(time) ? null : ago(time);
      if (text !== null && element.textContent !== text) element.textContent = text;
    }
  }
  setInterval(() => { if (!document.hidden) refreshAges(); }, 15000);
  document.addEventListener("visibilitychange", () => { if (!document.hidden) refreshAges(); });
  window.addEventListener("pageshow", refreshAges);
  // A page refreshed on request (`?refresh=1`, the status line's Refresh) is the page itself once shown: the address and
  // its history entry drop the parameter, or a reload, a bookmark or Back would make Kiosk ask its upstream again.
  if (new URL(location.href).searchParams.has("refresh")) {
    const plain = new URL(location.href);
    plain.searchParams.delete("refresh");
    history.replaceState(history.state, "", plain.href);
  }
  let resultsURL = withoutHash(location.href); // what #results shows (the address bar may show the pane's item)
  let shownURL = resultsURL;                   // the address bar, to tell a hash-only popstate apart
  let resultsTitle = document.title;          // restored when the pane closes
  let swaps = 0;    // bumped by every swap, so an older, slower load never overwrites a newer one
  let tailWaitsForUpstream = false; // the next page failed for the catalog's absence (section 2)
  let pending = 0;  // fetches in flight, for aria-busy

  // Fetches one of Kiosk's own pages and parses it. Throws on a network error or a 4xx/5xx, so the
  // caller can fall back to a normal navigation, which shows Kiosk's own page for the problem; with
  // `errorPages`, a 4xx page is returned as well (the console's filter shows its mistake in the results).
  async function fetchPage(url, { wait = false, signal, method = "GET", body, errorPages = false, shown = false } = {}) {
    // With X-Kiosk-Wait the server answers once its revalidation is done; X-Kiosk-View says the page is shown to
    // the reader (an item opened in the pane goes into the reading history, as a navigation to it would).
    const headers = { Accept: "text/html" };
    if (wait) headers["X-Kiosk-Wait"] = "1";
    if (shown) headers["X-Kiosk-View"] = "1";
    pending += 1; markBusy();
    try {
      let response;
      try {
        response = await fetch(url, { method, body, headers, signal, credentials: "same-origin", cache: "no-store" });
      } catch (error) {
        if (error.name !== "AbortError") error.unreachable = true; // no answer at all: Kiosk is unreachable
        throw error;
      }
      // The service worker's page for a URL this device never saved, while Kiosk is unreachable.
      if (response.headers.get("X-Kiosk-Unreachable")) throw Object.assign(new Error(`unreachable: ${url}`), { unreachable: true });
      const type = response.headers.get("Content-Type") || "";
      const acceptable = response.ok || (errorPages && response.status >= 400 && response.status < 500);
      if (!acceptable || !type.startsWith("text/html") || new URL(response.url).origin !== location.origin) {
        const failure = Object.assign(new Error(`${response.status} from ${url}`), { status: response.status });
        // Kiosk's own error page says what failed ("The catalog can't be reached right now…"): kept for a note to say it.
        if (type.startsWith("text/html") && new URL(response.url).origin === location.origin) {
          const said = new DOMParser().parseFromString(await response.text(), "text/html").querySelector("#main [role=alert]");
          if (said?.textContent.trim()) failure.said = said.textContent.trim();
        }
        throw failure;
      }
      const doc = new DOMParser().parseFromString(await response.text(), "text/html");
      // A page in another language than this one is never mixed into it. A copy the device saved before the reader
      // switched, shown while Kiosk is unreachable, counts as none (a search filters the rows shown, in this page's
      // language); Kiosk's own answer (the language switched in another tab) is gone to whole.
      if (doc.documentElement.lang && doc.documentElement.lang !== document.documentElement.lang) {
        const failure = new Error(`${url} is in another language (${doc.documentElement.lang})`);
        if (doc.body?.hasAttribute("data-saved-at")) failure.unreachable = true;
        throw failure;
      }
      return doc;
    } finally {
      pending -= 1; markBusy();
    }
  }

  // #results is busy while any fetch runs: CSS dims it, and assistive technology waits for the end.
  function markBusy() {
    if (pending > 0) $("#results")?.setAttribute("aria-busy", "true"); else $("#results")?.removeAttribute("aria-busy");
  }

  // A status line (created on demand, removed when empty) before `anchor`; role=status announces it.
  function note(id, anchor, text) {
    let element = document.getElementById(id);
    if (!text) return element?.remove();
    if (!element && anchor) {
      element = Object.assign(document.createElement("p"), { id, className: "hint" });
      element.setAttribute("role", "status");
      anchor.before(element);
    }
    if (element) element.textContent = text;
  }
  // Near the search box, outside #results so swaps keep it.
  const hint = text => note("js-hint", $("form.search")?.nextElementSibling || $("#results"), text);

  // "The same control" in replaced DOM: a form's action and its button's label, or a link's href.
  // A switch's two forms (a rule's Disable, then its Enable) name one control (`data-control`, the page's word for it):
  // the focus stays on it as it flips.
  const controlOf = form => form.dataset.control || form.getAttribute("action");
  function keyOf(element) {
    const form = element?.closest?.("form");
    if (form) return { action: controlOf(form), label: element.getAttribute("aria-label") };
    if (element?.matches?.("a[href]")) return { href: element.getAttribute("href") };
    return null;
  }
  function findByKey(key, root) {
    if (!key || !root) return null;
    if (key.href) return $$("a[href]", root).find(a => a.getAttribute("href") === key.href) || null;
    // Only a button shown: a dog moved to the top has its Move up hidden, and the focus goes to its Move down (same action).
    // (Nor one in a closed fold-out: the dogs list's Reset, done, is folded again, and the focus goes to the list.)
    const buttons = $$("form", root).filter(f => controlOf(f) === key.action
                                                 && !f.closest("[hidden], details:not([open])"))
      .flatMap(f => $$("button", f));
    // A label not found (a pending star's "(waiting)" dropped once sent): any button of the same form will do.
    return buttons.find(b => b.getAttribute("aria-label") === key.label) || buttons[0] || null;
  }
  // Tells offline.js that Kiosk's HTML changed under `root`, so it can show edits still waiting to be sent.
  const changed = root => document.dispatchEvent(new CustomEvent("kiosk:updated", { detail: { root } }));

  function focusOn(element) {
    if (!element) return;
    if (!element.matches("a[href], button, input, select, [tabindex]")) element.setAttribute("tabindex", "-1");
    element.focus({ preventScroll: true });
  }

  // Replaces #results (and Marvel's attribution) with the fetched page's, keeping the scroll position
  // and the focus: the search box is outside #results, and a control inside is found again by its key.
  function swapResults(doc, { fromWait = false, focusKey, announce } = {}) {
    const current = $("#results"), fresh = doc.getElementById("results");
    if (!current || !fresh) return false;
    const active = document.activeElement;
    const key = focusKey !== undefined ? focusKey : current.contains(active) ? keyOf(active) : null;
    const { scrollX, scrollY } = window;
    current.replaceWith(document.adoptNode(fresh));
    // The search box's state is the fresh page's: a filter refused (aria-invalid, tied to the reason said under it) or not.
    const freshField = searchField?.id ? doc.getElementById(searchField.id) : null;
    if (freshField) {
      for (const name of ["aria-invalid", "aria-describedby"]) {
        if (freshField.hasAttribute(name)) searchField.setAttribute(name, freshField.getAttribute(name)); else searchField.removeAttribute(name);
      }
    }
    appended.length = 0; // the pages the infinite scroll added belong to the list that was replaced
    const attribution = $("#main > .attribution"), freshAttribution = doc.querySelector("#main > .attribution");
    if (attribution && freshAttribution) attribution.textContent = freshAttribution.textContent;
    window.scrollTo(scrollX, scrollY);
    swaps += 1;
    tailWaitsForUpstream = false;
    if (key) focusOn(findByKey(key, fresh) || $("ul.items", fresh) || fresh);
    markBusy();
    applyLocalFilter();
    observePager();
    watchConnectivity();
    changed(fresh);
    // Said once, in a few words: the new list's status line and its banner (a count, "updated", "offline").
    const said = document.getElementById("results-said");
    if (said) {
      // (Without the status line's Refresh link: "Updated 16 min ago · Refresh" read aloud is a link's name, not news.)
      const text = announce || $$(":scope > p.status, :scope > .banner", fresh).map(p => {
        const copy = p.cloneNode(true);
        for (const link of $$("a.refresh", copy)) link.remove();
        return copy.textContent.trim().replace(/\s*·\s*$/, "");
      }).filter(Boolean).join(" ");
      said.textContent = "";
      requestAnimationFrame(() => { said.textContent = text; });
    }
    // A page that is itself still revalidating gets one waited reload (never a loop).
    if (!fromWait && fresh.dataset.revalidating === "true") reloadResults();
    return true;
  }

  // 1 and 2: reloads what #results shows once the server has fresh data. Dropped when something
  // else swapped meanwhile (what the user typed wins over an older snapshot).
  let reloading = false;
  async function reloadResults() {
    if (reloading) return;
    reloading = true;
    const before = swaps;
    try {
      const doc = await fetchPage(resultsURL, { wait: true });
      // The device's copy of a page saved while it was refreshing: that refresh will never be heard of.
      if (Number(doc.body?.dataset.savedAt)) endRefreshing(doc);
      // The pages the infinite scroll appended (or Back put back) come again after the fresh first page, and the row
      // at the top of the screen stays there: a revalidation must not take the reader's place away.
      const pages = appended.slice(), top = topRow();
      if (swaps === before && swapResults(doc, { fromWait: true }) && pages.length) await appendPages(pages, top);
    } catch {
      // Kept as it is, but for a "refreshing…" whose end no one will hear of now (Kiosk went away, the refresh failed).
      endRefreshing(document);
    }
    reloading = false;
    watchConnectivity();
  }
  // A list's status line says "refreshing…" while Kiosk revalidates it; that ends here when the refresh's answer cannot
  // come (said for good, it would be a promise never kept): the rest of the line, "stale" included, stays true.
  function endRefreshing(doc) {
    const results = doc.getElementById("results");
    if (!results || results.dataset.revalidating !== "true") return;
    results.dataset.revalidating = "false";
    for (const span of $$("p.status .refreshing", results)) {
      const before = span.previousSibling;
      if (before?.nodeType === Node.TEXT_NODE) before.textContent = before.textContent.replace(/\s*·\s*$/, "");
      span.remove();
    }
  }

  // 2: connectivity, one poller with both meanings: the upstream is offline (Kiosk answers from its store: the
  // list's #offline-banner) and Kiosk itself is unreachable (offline.js's banner, from the service worker). While
  // either shows, /api/connectivity is asked every 2 s, not while the tab is hidden (nobody is looking, and a
  // phone saves its battery); each watcher hears what the answer says: "online", "upstream-offline" (Kiosk
  // answered, its upstream did not) or "unreachable" (Kiosk did not answer).
  const connectivityWatchers = new Map();
  // A next page that could not be appended because the catalog was unreachable (503, 504) waits for it too
  // (`tailWaitsForUpstream`): appended once it answers, as a list's banner is cleared (the reader at the list's end saw
  // the failure stay).
  connectivityWatchers.set("upstream-offline", {
    active: () => !!$("#results #offline-banner") || tailWaitsForUpstream,
    changed: state => {
      if (state !== "online") return;
      if ($("#results #offline-banner")) return reloadResults();
      if (tailWaitsForUpstream) { tailWaitsForUpstream = false; loadMore(); }
    },
  });
  let pollTimer = 0;
  const watching = () => [...connectivityWatchers.values()].filter(watcher => watcher.active());
  function watchConnectivity({ now = false } = {}) {
    clearTimeout(pollTimer);
    if (watching().length) pollTimer = setTimeout(pollConnectivity, now ? 0 : 2000);
  }
  async function pollConnectivity() {
    const watchers = watching();
    if (document.hidden || reloading || !watchers.length) return;
    let state = "unreachable";
    try {
      const response = await fetch(self.KioskClient.routes.connectivity, { credentials: "same-origin", cache: "no-store",
        headers: { Accept: "application/json" } });
      if (response.ok) state = (await response.json()).online === true ? "online" : "upstream-offline";
    } catch { /* Kiosk is unreachable */ }
    for (const watcher of watchers) watcher.changed(state);
    watchConnectivity();
  }
  // Another part of the page watching too (offline.js, for Kiosk unreachable).
  function onConnectivity(name, watcher) {
    connectivityWatchers.set(name, watcher);
    watchConnectivity();
  }
  document.addEventListener("visibilitychange", () => { if (!document.hidden) watchConnectivity({ now: true }); });
  // Back to a list kept in the back/forward cache: it shows at once as it was left, then its rows are
  // fetched again (a star set on a detail meanwhile, a fresher snapshot) and swapped in.
  // It is the list last shown again, which its items' back links return to (the script that noted it does not run again).
  window.addEventListener("pageshow", event => {
    if (!event.persisted) return;
    // A page kept from before the language was switched comes back whole in the new one: its rows, fetched again below,
    // came in the new language beside the old page's words.
    const chosen = /(?:^|;\s*)kiosk_lang=([a-z]+)/.exec(document.cookie)?.[1];
    if (chosen && chosen !== document.documentElement.lang) { location.reload(); return; }
    if (!$("#results")) return;
    rememberList();
    reloadResults();
  });

  // 3: the search form. Typing waits data-delay ms after the last keystroke; a newer keystroke
  // cancels both the timer and the request in flight, so typing fast sends one request.
  const searchForm = $("form.search");
  const searchInput = searchForm && $("input[name=q]", searchForm);
  // The field / goes to: the catalog's search box, or the debugger's filter (named `filter`).
  const searchField = searchInput || (searchForm && $("input[type=search]", searchForm));
  let searchTimer = 0, searchController = null;
  // Set when a search could not reach Kiosk: the text then filters the rows shown, whatever its length, and the page
  // stays (navigating to the search would show only "not saved on this device"). Cleared by the next search answered.
  let searchUnreachable = false;

  // Characters as Kiosk counts a search's (Swift's: what a reader sees as one, an emoji included), not UTF-16 units.
  const segmenter = typeof Intl !== "undefined" && Intl.Segmenter ? new Intl.Segmenter() : null;
  const characters = text => segmenter ? [...segmenter.segment(text)].length : [...text].length;
  // 1–2 characters send no request (too broad to search); they filter the rows already shown, as any text does while
  // Kiosk is unreachable — but not the rows Kiosk found for that very text (a search opened by its address, which matched
  // words the rows do not show: its count said 10, the filter left 4).
  function localFilterText() {
    const text = searchInput ? searchInput.value.trim() : "";
    if (!searchUnreachable && text !== "" && new URL(resultsURL, location.href).searchParams.get("q")?.trim() === text) return "";
    const length = characters(text);
    return length >= 1 && (length <= 2 || searchUnreachable) ? text.toLocaleLowerCase() : "";
  }
  let lastFilterSaid = ""; // the filter whose count was last said aloud
  function applyLocalFilter() {
    const needle = localFilterText();
    let shown = 0;
    for (const row of $$("#results ul.items > li")) {
      row.hidden = needle !== "" && !($(".title", row)?.textContent || "").toLocaleLowerCase().includes(needle);
      row.style.display = row.hidden ? "none" : ""; // the stylesheet's `ul.items li { display: flex }` outranks [hidden]
      if (!row.hidden) shown += 1;
    }
    // A filter that leaves no row says so, as a search that finds nothing does: an empty list reads as still loading.
    const said = searchUnreachable ? strings.filteringUnreachable : strings.filtering;
    const text = needle ? (shown ? said : `${said} ${strings.noMatches}`) : "";
    hint(text);
    // Said aloud through the list's own live region (there before the change, so screen readers hear it), once per
    // filter: how many rows are left, and why the list is not searched yet. A hint made on the spot is not heard.
    const results = document.getElementById("results-said");
    if (results && needle && needle !== lastFilterSaid) {
      const count = (shown === 1 ? strings.shownOne : strings.shownMany).replace("{n}", shown.toLocaleString(document.documentElement.lang));
      results.textContent = `${count} ${text}`;
    }
    lastFilterSaid = needle;
  }

  // The list URL for the form's state: its action plus its non-empty fields (q only when asked).
  function formURL(withQuery) {
    const url = new URL(searchForm.getAttribute("action") || location.pathname, location.href);
    for (const [name, value] of new FormData(searchForm)) {
      const text = String(value).trim();
      if (text && (withQuery || name !== "q")) url.searchParams.set(name, text);
    }
    return url.href;
  }

  // Fetches a list or search URL into #results, and puts it in the address bar: in place of the list's entry, or, with
  // `push`, as a new one (a search started, a filter chosen: Back brings the list as it was before it), which notes the
  // address it came from.
  async function loadResults(url, { errorPages = false, push = false, fromHistory = false } = {}) {
    clearTimeout(searchTimer);
    searchController?.abort();
    const controller = searchController = new AbortController();
    if (!localFilterText()) hint(strings.loading);
    try {
      const doc = await fetchPage(url, { signal: controller.signal, errorPages });
      if (!doc.getElementById("results") || !$("#results")) throw new Error("no #results");
      searchUnreachable = false;
      // Set before the swap, which may start a waited reload of resultsURL.
      const from = resultsURL;
      resultsURL = shownURL = withoutHash(url);
      // The query lives in the URL: reload and share keep it. A refined search keeps its entry's origin.
      if (push && resultsURL !== from) history.pushState({ from }, "", url);
      else history.replaceState(history.state?.from ? { from: history.state.from } : null, "", url);
      const view = doc.getElementById("main")?.dataset.view;
      if (view) $("#main").dataset.view = view;
      // Back or Forward to a list of other filters: they show what it was asked with, as the page would (a source's own
      // defaults where none is named). Not while they are being chosen or typed (the console's say "any" as a term of
      // their key is typed: debug.js).
      for (const select of searchForm && fromHistory ? $$("select[name]", searchForm) : []) {
        const asked = doc.querySelector(`form.search select[name="${CSS.escape(select.name)}"]`);
        if (asked && select.value !== asked.value) select.value = asked.value;
      }
      resultsTitle = document.title = doc.title || document.title;
      closePane();
      swapResults(doc);
      rememberList();
    } catch (error) {
      if (error.unreachable && searchInput) {
        // Kiosk is unreachable and the device holds no copy of this list: stay, and filter what is shown; the search
        // goes when Kiosk answers again (the watcher below).
        searchUnreachable = true;
        applyLocalFilter();
        watchConnectivity();
      } else if (error.name !== "AbortError") {
        location.assign(url);
      }
    } finally {
      if (searchController === controller) searchController = null;
    }
  }

  // Kiosk answers again after a search could not reach it: the text typed is searched (or, too short to search,
  // filters as usual), and the hint saying Kiosk is unreachable goes.
  connectivityWatchers.set("search-unreachable", {
    active: () => searchUnreachable,
    changed: state => {
      if (state === "unreachable" || !searchUnreachable) return;
      searchUnreachable = false;
      if (characters(searchInput.value.trim()) >= 3) loadResults(formURL(true)); else applyLocalFilter();
    },
  });

  if (searchForm && searchInput) {
    const delay = Number(searchForm.dataset.delay) || 500;
    const showsSearch = () => $("#main")?.dataset.view === "search" || new URL(resultsURL).searchParams.has("q");
    searchInput.addEventListener("input", () => {
      clearTimeout(searchTimer);
      searchController?.abort();
      applyLocalFilter();
      const length = characters(searchInput.value.trim());
      // A search started from a list is an entry of its own (Back brings the list back); one refined replaces it.
      const starting = () => !new URL(resultsURL).searchParams.has("q");
      if (length >= 3) searchTimer = setTimeout(() => loadResults(formURL(true), { push: starting() }), delay);
      // The box emptied on the search that started from this very list: Back to that list's own entry, rather than a
      // second entry of it.
      else if (length === 0 && showsSearch() && history.state?.from === withoutHash(formURL(false))) history.back();
      // Back under three characters from a search: the catalog's list again (its count, its address), which the
      // text then filters — not the last search's rows filtered by text they were not searched for.
      else if (showsSearch()) searchTimer = setTimeout(() => loadResults(formURL(false)), delay);
      else if (length === 0) observePager(); // rows were hidden: the pager may load more now
    });
    searchForm.addEventListener("submit", event => {
      event.preventDefault();
      loadResults(formURL(true), { push: !new URL(resultsURL).searchParams.has("q") });
    });
    // A filter applies at once, like a submit, as an entry of its own.
    searchForm.addEventListener("change", event => { if (event.target.matches("select")) loadResults(formURL(true), { push: true }); });
  }

  // 4: infinite scroll. When the pager nears the viewport, the next page's rows are appended; the URL
  // stays (the pager links still lead to each page).
  let loadingMore = false;
  let restoring = false; // appendPages is putting pages back: the scroll watcher waits, or it would race it
  const observer = "IntersectionObserver" in window
    ? new IntersectionObserver(entries => { if (entries.some(e => e.isIntersecting)) loadMore(); }, { rootMargin: "600px 0px" })
    : null;
  function observePager() {
    if (!observer) return;
    observer.disconnect();
    const pager = $("#results nav.pages");
    if (pager) observer.observe(pager); // observing reports the current state, so a short page fills up
  }
  const appended = []; // the addresses of the pages appended to the list shown, in order (the reader's place)
  async function loadMore() {
    const list = $("#results ul.items[data-next]");
    if (!list || !$("#results nav.pages") || list.classList.contains("edit") || loadingMore || restoring || localFilterText()) return;
    if (await appendPage(list.dataset.next)) observePager(); // its callback comes later, after appendPage's `finally`
  }
  // Appends the rows of the page at `url` to the list and moves its pager on: true when it did.
  async function appendPage(url) {
    const list = $("#results ul.items[data-next]"), pager = $("#results nav.pages");
    if (!list || !pager || loadingMore) return false;
    loadingMore = true;
    const before = swaps;
    note("js-more", pager, strings.loading);
    try {
      const doc = await fetchPage(url);
      const fresh = doc.querySelector("#results ul.items");
      if (!fresh) throw new Error("no list");
      if (swaps !== before) return false; // #results was replaced meanwhile, and this note with it
      // Rows can shift between pages while paging: one already shown is not shown twice.
      const shown = new Set($$(":scope > li", list).map(row => row.dataset.id));
      for (const row of $$(":scope > li", fresh)) if (!shown.has(row.dataset.id)) list.append(document.adoptNode(row));
      if (fresh.dataset.next) list.dataset.next = fresh.dataset.next; else delete list.dataset.next;
      appended.push(url);
      changed(list);
      const freshPager = doc.querySelector("#results nav.pages");
      // Focus that reached the pager while the page loaded moves to the same link in the new one.
      const focusKey = pager.contains(document.activeElement) ? keyOf(document.activeElement) : null;
      if (freshPager) pager.replaceWith(document.adoptNode(freshPager)); else pager.remove();
      if (focusKey) focusOn(findByKey(focusKey, freshPager) || freshPager || list);
      note("js-more", null, "");
      return true;
    } catch (error) {
      // The pager links stay, and no retry loop: the observer fires again only when the pager moves (and the list is
      // fetched again when an unreachable Kiosk answers: offline.js).
      note("js-more", pager, error.unreachable && strings.nextUnreachable || error.said || strings.loadFailed);
      if (error.status === 503 || error.status === 504) { tailWaitsForUpstream = true; watchConnectivity(); }
      return false;
    } finally {
      loadingMore = false;
    }
  }

  // 5: POST forms in #results (star, move, delete, reset) go through fetch, and the page the 303
  // leads to is swapped in. Others (language, the star in the detail pane) submit normally.
  const sending = new WeakSet();
  async function post(action, body, focusKey, fallback, form) {
    if (form && sending.has(form)) return false; // a second click while the first is on its way
    if (form) sending.add(form);
    try {
      const doc = await fetchPage(action, { method: "POST", body });
      const row = form?.matches(".star") ? form.closest("li[data-id]") : null;
      const freshRow = row && $$("#results ul.items > li", doc).find(li => li.dataset.id === row.dataset.id);
      const freshForm = freshRow && $$("form.star", freshRow).find(f => f.getAttribute("action") === action);
      if (freshForm) {
        // Only the star changed: replace just it, so rows appended by scrolling stay.
        form.replaceWith(document.adoptNode(freshForm));
        changed(row);
        focusOn(findByKey(focusKey, row));
      } else if (!swapResults(doc, { focusKey, announce: movedTo(form, doc, body) })) {
        location.assign(resultsURL);
      }
      return true;
    } catch (error) {
      // Kiosk refused it and said why (the list changed under this page: a dog deleted on another device): said here —
      // by the service worker's word on the failed edit when it sent it, else in a toast — and the list shown as it is
      // now. Anything else (no answer) goes the way the form would.
      if (error.said && !error.unreachable) {
        if (!navigator.serviceWorker?.controller) showToast(error.said);
        reloadResults();
      } else {
        fallback();
      }
      return false;
    } finally {
      if (form) sending.delete(form);
    }
  }
  // Where a dog a move form moved now stands in `doc`, said as a screen reader is told it ("Luna: position 3 of 5.");
  // undefined for any other form (the list's own status is said then).
  function movedTo(form, doc, body) {
    // A reset said done once Kiosk made it (the device's copy, the reset waiting to be sent, says so in its banner).
    if (form?.matches("form.reset")) return Number(doc.body?.dataset.savedAt) > 0 ? undefined : strings.resetDone;
    const row = form?.matches("form.move") ? form.closest("li[data-id]") : null;
    if (!row) return undefined;
    let rows = $$("#results ul.items.edit > li[data-id]", doc);
    let index = rows.findIndex(li => li.dataset.id === row.dataset.id);
    // The device's copy (Kiosk unreachable, the move waiting in the outbox) is the list as it was saved, without the
    // edits that wait: the place is the one the move named among the rows this page shows (which shows them), as sent.
    if (Number(doc.body?.dataset.savedAt) > 0) {
      rows = $$("#results ul.items.edit > li[data-id]");
      const to = Number(body?.get("to"));
      index = rows.includes(row) && Number.isInteger(to) ? Math.max(0, Math.min(rows.length - 1, to)) : -1;
    }
    if (index < 0) return undefined;
    return (strings.moved || "{title}: position {n} of {total}.").replace("{title}", $(".title", row)?.textContent.trim() || "")
      .replace("{n}", String(index + 1)).replace("{total}", String(rows.length));
  }
  // After a deletion from a list its user orders, or a favorite's removal from the favorites page, a toast offers
  // Undo for ten seconds. Undo posts where the row's form said (`data-undo`), with the same token and return (and the
  // `action` its `data-undo-action` names: a star's removal is undone by adding it); when Kiosk is unreachable the
  // worker queues it after the first write, and offline.js shows the two as cancelling out.
  let toastTimer = 0;
  // The toast at the foot of the page, saying `text` (and holding `button`, if any) for ten seconds. WCAG 2.2.1
  // (Timing Adjustable) asks that a time limit can be extended: the ten seconds wait while the pointer is over the
  // toast or the focus is in it (a reader still reading it, or on its way to Undo), and start again in full once both
  // have left.
  function showToast(text, button) {
    let toast = document.getElementById("undo-toast");
    if (!toast) {
      toast = Object.assign(document.createElement("div"), { id: "undo-toast", className: "toast" });
      toast.setAttribute("role", "status");
      toast.addEventListener("pointerenter", () => clearTimeout(toastTimer));
      toast.addEventListener("focusin", () => clearTimeout(toastTimer));
      toast.addEventListener("pointerleave", () => timeToast(toast));
      toast.addEventListener("focusout", event => { if (!toast.contains(event.relatedTarget)) timeToast(toast); });
      document.body.append(toast);
    }
    toast.replaceChildren(Object.assign(document.createElement("span"), { textContent: text }), ...(button ? [" ", button] : []));
    toast.hidden = false;
    timeToast(toast);
    return toast;
  }
  // Starts the toast's ten seconds, unless the pointer or the focus is on it (it waits for them to leave).
  function timeToast(toast) {
    clearTimeout(toastTimer);
    if (toast.hidden || toast.matches(":hover") || toast.contains(document.activeElement)) return;
    toastTimer = setTimeout(() => hideToast(toast), 10000);
  }
  // Hides the toast (its ten seconds over, Esc, Undo pressed, its sentence no longer true). Focus in it would fall to
  // the page's start (the body) with it: it goes to the list the toast was about instead, where the reader was.
  function hideToast(toast) {
    clearTimeout(toastTimer);
    const hadFocus = toast.contains(document.activeElement);
    toast.hidden = true;
    if (hadFocus) focusOn($("#results ul.items") || $("#results") || $("main"));
  }
  // `focusKey` is the row's button: Undo brings the row back with the focus on it (not on the page). A deletion made
  // while the toast still offers Undo joins it: one Undo brings back every one, the last first (each goes back where
  // it was), rather than the first being lost with its toast.
  let undoable = [];
  function offerUndo(title, undoPath, body, focusKey, said = strings.deleted || "{title} deleted.") {
    const toast = document.getElementById("undo-toast");
    if (!toast || toast.hidden || !undoable.length) undoable = [];
    undoable.push({ title, undoPath, body, focusKey, said });
    const button = Object.assign(document.createElement("button"), { type: "button", textContent: strings.undo || "Undo" });
    const many = said === strings.unstarred ? strings.unstarredMany || "{titles} removed from favorites." : strings.deletedMany || "{titles} deleted.";
    const text = undoable.length === 1 ? said.replace("{title}", title)
      : many.replace("{titles}", new Intl.ListFormat(document.documentElement.lang || "en", { type: "conjunction" })
          .format(undoable.map(entry => entry.title)));
    const shown = showToast(text, button);
    const entries = undoable;
    button.addEventListener("click", async () => {
      hideToast(shown);
      undoable = [];
      for (const entry of [...entries].reverse()) {
        if (!(await post(entry.undoPath, entry.body, entry.focusKey, () => location.assign(resultsURL)))) break;
      }
    });
  }
  // The settings sent as they are, never queued (the language switch, which sets a cookie on Kiosk and shows the page
  // again in the other language; clearing the reading history): with Kiosk out of reach the browser's own error page
  // would replace the page being read, so each is sent with fetch first and, when Kiosk does not answer, the page stays
  // and says why. Answered, the page is opened again (the cookie is set, the history cleared by then).
  document.addEventListener("submit", async event => {
    const form = event.target;
    // Read as attributes: a field named `method` or `action` (the console's rule and resend forms have one) stands in
    // for the form's own properties of those names.
    const action = new URL(form.getAttribute("action") || location.href, location.href);
    // (The client table's `direct` writes: the two the server sends as they are, never queued.)
    if (event.defaultPrevented || (form.getAttribute("method") || "get").toLowerCase() !== "post"
        || !self.KioskClient.routes.direct.includes(action.pathname)) return;
    event.preventDefault();
    let answer;
    try {
      answer = await fetch(action.href, { method: "POST", body: new URLSearchParams(new FormData(form)),
        credentials: "same-origin", redirect: "manual" });
    } catch {
      const toast = showToast(form.matches("form.lang")
        ? strings.languageNeedsKiosk || "Kiosk is unreachable: the language can be switched once it answers."
        : strings.historyNeedsKiosk || "Kiosk is unreachable: the reading history can be cleared once it answers.");
      // Kiosk answering again makes the sentence untrue: it goes then, not ten seconds on.
      let waiting = true;
      connectivityWatchers.set("setting-toast", {
        active: () => waiting && !toast.hidden,
        changed: state => {
          if (state === "unreachable") return;
          waiting = false;
          hideToast(toast);
        },
      });
      watchConnectivity();
      return;
    }
    // Refused (a stale form's token, say): the form's own POST shows Kiosk's page saying why.
    if (answer.type !== "opaqueredirect" && !answer.ok) return form.submit();
    // The history cleared: said, where the reader is (WCAG 4.1.3), its fold-out closed; nothing on the page changed.
    if (form.matches("form.clear-history")) {
      const fold = form.closest("details");
      if (fold) { fold.open = false; $("summary", fold)?.focus(); }
      showToast(strings.historyCleared || "Reading history cleared.");
      return;
    }
    // Only a path of this origin, as the server's own check allows (an error page's return is the address asked for);
    // without one (clearing the history), this page again, as Kiosk's redirect would.
    const back = $("input[name=return]", form)?.value ?? location.pathname + location.search;
    const target = /^\/(?![\/\\])/.test(back) ? back : "/";
    // The same list in the other language: the reader's place in it (its appended pages, the row at the top) is put
    // back, as Back puts it back (the page saves it as it goes).
    if (form.matches("form.lang")) session.set("kiosk:returning", pathAndQuery(target));
    location.assign(target);
  });
  document.addEventListener("submit", event => {
    const form = event.target;
    if (event.defaultPrevented || !form.matches("#results form[method=post], form.reset[method=post]") || !$("#results")) return;
    event.preventDefault();
    const key = keyOf(event.submitter || $("button", form));
    // If the fetch fails, the normal POST (form.submit skips this listener) shows Kiosk's own page. Under the
    // service worker the write is in its outbox already (a form's POST would not be: the worker queues only what
    // pages send with fetch), so the list is opened again instead, showing it as waiting or failed.
    const fallback = navigator.serviceWorker?.controller ? () => location.assign(resultsURL) : () => form.submit();
    const body = new URLSearchParams(new FormData(form));
    const undo = form.dataset.undo, title = form.closest("li[data-id]")?.querySelector(".title")?.textContent || "";
    const undoBody = new URLSearchParams(body);
    if (form.dataset.undoAction) undoBody.set("action", form.dataset.undoAction);
    const said = form.dataset.undoAction ? strings.unstarred : undefined;
    // A reset brings back every deletion the toast offers to undo: its offer is no longer true.
    if (form.matches("form.reset")) {
      const toast = document.getElementById("undo-toast");
      if (toast && !toast.hidden && undoable.length) { undoable = []; hideToast(toast); }
    }
    // A row deleted (or unstarred on the favorites page) leaves the list: the focus goes to the same control of the row
    // that takes its place, else of the one before it, not to the whole list (a keyboard user deletes on down the list).
    const row = undo ? form.closest("li[data-id]") : null;
    const neighbour = row && [row.nextElementSibling, row.previousElementSibling].find(li => li?.matches("li[data-id]"));
    const same = neighbour && $$("form", neighbour).find(f => f.className === form.className && f.dataset.undo);
    const focusAfter = (same && keyOf($("button", same))) || key;
    post(form.getAttribute("action"), body, focusAfter, fallback, form)
      .then(done => { if (done && undo) offerUndo(title, undo, undoBody, key, said); });
  });

  // 5: drag and drop in the dogs editor. The upper half of a row means "before it", the lower "after".
  let dragged = null, dropIndex = -1;
  const editRow = target => target instanceof Element ? target.closest("#results ul.items.edit > li[draggable]") : null;
  const clearDropTargets = () => $$(".drop-target").forEach(row => row.classList.remove("drop-target", "drop-after"));
  document.addEventListener("dragstart", event => {
    const row = editRow(event.target);
    if (!row) return;
    dragged = row; dropIndex = -1;
    row.classList.add("dragging");
    event.dataTransfer.effectAllowed = "move";
    event.dataTransfer.setData("text/plain", row.dataset.id || "");
  });
  document.addEventListener("dragover", event => {
    const row = editRow(event.target);
    if (!dragged || !row || row.parentElement !== dragged.parentElement) return;
    event.preventDefault(); // allows the drop
    event.dataTransfer.dropEffect = "move";
    const rows = $$(":scope > li", row.parentElement);
    const box = row.getBoundingClientRect();
    const after = event.clientY > box.top + box.height / 2;
    // The index the dragged row will have once it is taken out and put back in.
    const from = rows.indexOf(dragged);
    let to = rows.indexOf(row) + (after ? 1 : 0);
    if (from < to) to -= 1;
    dropIndex = to === from ? -1 : to;
    clearDropTargets();
    if (dropIndex >= 0) row.classList.add("drop-target", ...(after ? ["drop-after"] : []));
  });
  document.addEventListener("dragend", () => {
    dragged?.classList.remove("dragging");
    clearDropTargets();
    dragged = null;
  });
  document.addEventListener("drop", event => {
    const row = editRow(event.target), source = dragged;
    if (!source || !row) return;
    event.preventDefault();
    if (dropIndex < 0) return; // dropped where it was
    const back = $("#results form.move input[name=return]")?.value || resultsURL;
    const body = new URLSearchParams({ to: String(dropIndex), return: back, csrf: $("#results input[name=csrf]")?.value || "" });
    const action = source.dataset.move;
    post(action, body, { action, label: null }, () => location.assign(resultsURL));
  });

  // 6: a picture that cannot load becomes a placeholder of the same size instead of a broken icon.
  function replaceImage(img) {
    const placeholder = Object.assign(document.createElement("span"), { className: "img-placeholder" });
    placeholder.setAttribute("role", "img");
    placeholder.setAttribute("aria-label", strings.imageUnavailable);
    const width = parseInt(img.getAttribute("width"), 10), height = parseInt(img.getAttribute("height"), 10);
    if (width > 0) placeholder.style.width = `${width}px`;
    if (height > 0) placeholder.style.height = `${height}px`;
    img.replaceWith(placeholder);
  }
  document.addEventListener("error", event => { if (event.target instanceof HTMLImageElement) replaceImage(event.target); }, true);
  // Pictures that failed before this deferred script ran.
  for (const img of [...document.images]) if (img.complete && img.naturalWidth === 0 && img.getAttribute("src")) replaceImage(img);

  // 7: on a wide screen a row opens beside the list. The address bar shows the item's URL, so
  // reload and share work, and Back closes the pane.
  const wide = window.matchMedia("(min-width: 64rem)");
  // The rows that open in the pane: a catalog's items and the debugger's requests.
  const paneLinks = "#results ul.items li > a, #results a[data-pane]";
  // The rows j/k and the arrows move between: those, and the console's rows that lead elsewhere (an exchange paused at a
  // breakpoint, listed first, leading to its pause).
  const rowLinks = paneLinks + ", #results tr[data-inflight] td.name > a";
  function markCurrent(href) {
    const path = href ? new URL(href, location.href).pathname : null;
    for (const a of $$(paneLinks)) {
      if (new URL(a.href).pathname === path) a.setAttribute("aria-current", "true"); else a.removeAttribute("aria-current");
    }
  }
  function closePane() {
    const pane = $("#detail-pane");
    if (!pane || pane.hidden) return;
    pane.replaceChildren();
    pane.hidden = true;
    markCurrent(null);
    document.title = resultsTitle;
  }
  async function openDetail(href, push) {
    const pane = $("#detail-pane");
    try {
      const doc = await fetchPage(href, { shown: true }), main = doc.getElementById("main");
      if (!main || !pane) throw new Error("no detail");
      pane.replaceChildren(...[...main.children].filter(child => !child.matches("p.back")).map(child => document.adoptNode(child)));
      demoteHeadings(pane);
      pane.hidden = false;
      pane.scrollTop = 0;
      changed(pane);
      markCurrent(href);
      if (push && withoutHash(href) !== shownURL) history.pushState({ detail: href }, "", href);
      shownURL = withoutHash(location.href);
      document.title = doc.title || document.title;
      focusOn($("h1", pane) || pane);
    } catch {
      location.assign(href);
    }
  }
  // The item's page is its own h1 and h2s; in the pane it sits under the list's h1, one level down for assistive
  // technology (a page has one h1), its look unchanged (the stylesheet styles the item's page by its tags).
  function demoteHeadings(root) {
    for (const heading of $$("h1, h2, h3, h4, h5", root)) heading.setAttribute("aria-level", String(Number(heading.tagName[1]) + 1));
  }
  document.addEventListener("click", event => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const link = event.target instanceof Element ? event.target.closest(paneLinks) : null;
    if (!link || !wide.matches || !$("#detail-pane")) return;
    event.preventDefault();
    openDetail(link.href, true);
  });
  window.addEventListener("popstate", event => {
    const here = withoutHash(location.href);
    if (here === shownURL || !$("#detail-pane")) return; // a jump to #main, or a page without a pane
    shownURL = here;
    if (event.state?.detail) return void openDetail(event.state.detail, false);
    closePane();
    // Back to a list address other than what #results shows (a search replaced it meanwhile).
    if (here !== resultsURL) {
      // The box says what the list shown was searched for (its filters are set from the page that comes).
      if (searchInput) searchInput.value = new URL(here).searchParams.get("q") || "";
      loadResults(here, { fromHistory: true });
    }
  });

  // 8: the keyboard, as in a mail reader or DevTools: j/k or the arrows move between the rows, Enter
  // opens the one focused (a link: the click above), / goes to the search box, Esc closes the pane.
  // Not while typing in a field, and never with a modifier (the browser's own shortcuts stay).
  document.addEventListener("keydown", event => {
    if (event.defaultPrevented || event.metaKey || event.ctrlKey || event.altKey) return;
    const target = event.target instanceof Element ? event.target : null;
    if (target?.closest("input, textarea, select, [contenteditable]")) {
      // Esc in the search box clears it, and with it what it searched or filtered (as the browser's own clearing of a
      // search field does, but said to the page, which the browser's does not always); on an empty box it leaves it.
      if (event.key === "Escape" && target === searchField && !event.isComposing) {
        event.preventDefault();
        if (searchField.value === "") return searchField.blur();
        searchField.value = "";
        searchField.dispatchEvent(new Event("input", { bubbles: true }));
      }
      return;
    }
    const links = $$(rowLinks).filter(a => a.offsetParent !== null); // rows hidden by the local filter are skipped
    const current = links.indexOf(document.activeElement?.closest?.(rowLinks) ?? null);
    const move = { j: 1, ArrowDown: 1, k: -1, ArrowUp: -1 }[event.key];
    if (move && links.length && (current >= 0 || event.key === "j" || event.key === "k")) {
      event.preventDefault();
      const marked = links.findIndex(a => a.getAttribute("aria-current") === "true");
      const from = current >= 0 ? current : marked;
      const next = links[Math.min(links.length - 1, Math.max(0, from < 0 ? 0 : from + move))];
      next.focus();
      next.scrollIntoView({ block: "nearest" });
    } else if (event.key === "/" && searchField) {
      event.preventDefault();
      searchField.focus();
      searchField.select();
    } else if (event.key === "Escape" && document.getElementById("undo-toast")?.hidden === false) {
      // Esc dismisses the toast first (its Undo is gone with it, as after its ten seconds).
      hideToast(document.getElementById("undo-toast"));
    } else if (event.key === "Escape" && $("#detail-pane") && !$("#detail-pane").hidden) {
      event.preventDefault();
      const opened = $$(paneLinks).find(a => a.getAttribute("aria-current") === "true");
      closePane();
      // The address goes back to the list's (a new entry: Back reopens the request, as in a mail reader).
      if (shownURL !== resultsURL) {
        history.pushState(null, "", resultsURL);
        shownURL = resultsURL;
      }
      focusOn(opened);
    }
  });

  // 9: the reader's place. Back brings a list back as it was left: the same rows (the pages the infinite
  // scroll appended) at the same position. The back/forward cache does that when the browser keeps the page;
  // when it does not (memory, the worker, a reload), the list has remembered, per address in sessionStorage,
  // the pages it appended and the row at the top of the screen, and puts them back. Each list with a pane (a
  // catalog, the debugger's requests) also remembers the address last shown (page, filters, search), which a
  // page's "‹ Catalog" or "‹ All requests" link and the wide screen's split view return to.
  const session = {
    get(key) { try { return JSON.parse(sessionStorage.getItem(key) || "null"); } catch { return null; } },
    set(key, value) { try { sessionStorage.setItem(key, JSON.stringify(value)); } catch { /* private mode: no place kept */ } },
    remove(key) { try { sessionStorage.removeItem(key); } catch { /* as above */ } },
  };
  const pathAndQuery = url => { const u = new URL(url, location.href); return u.pathname + u.search; };
  const placeKey = url => "kiosk:place:" + pathAndQuery(url);
  // Keyed by the list's path: a page's back link names the same path, whatever filter the list had.
  const listKey = url => "kiosk:list:" + new URL(url, location.href).pathname;
  const mainView = () => $("#main")?.dataset.view;
  const isList = () => ["list", "search"].includes(mainView()) && !!$("#results ul.items");
  // At most this many appended pages are put back (a reader who scrolled further starts near the end of them).
  const maximumRestoredPages = 20;
  const hasPane = () => !!$("#results") && !!$("#detail-pane");
  function rememberList() {
    if (hasPane()) session.set(listKey(resultsURL), pathAndQuery(resultsURL));
  }
  // The first row still on the screen, and how far below the top it is.
  function topRow() {
    const top = $$("#results ul.items > li[data-id]").find(row => row.getBoundingClientRect().bottom > 0);
    return top ? { id: top.dataset.id, offset: top.getBoundingClientRect().top } : null;
  }
  function savePlace() {
    if (!isList()) return;
    session.set(placeKey(resultsURL), { pages: appended.slice(0, maximumRestoredPages), scrollY: window.scrollY, top: topRow() });
  }
  // Appends `pages` in order — after a load of the scroll watcher's already in flight, which may bring one of them —
  // then scrolls the row `top` back to where it was on the screen (else to `scrollY`).
  async function appendPages(pages, top, scrollY) {
    restoring = true;
    try {
      for (const url of pages) {
        while (loadingMore) await new Promise(resolve => setTimeout(resolve, 50));
        if (appended.includes(url)) continue;
        if (!(await appendPage(url))) break;
      }
    } finally {
      restoring = false;
    }
    const row = top && $$("#results ul.items > li[data-id]").find(li => li.dataset.id === top.id);
    if (row) window.scrollTo(0, row.getBoundingClientRect().top + window.scrollY - top.offset);
    else if (scrollY !== undefined) window.scrollTo(0, scrollY);
  }
  async function restorePlace() {
    const navigation = performance.getEntriesByType?.("navigation")?.[0]?.type;
    const returning = session.get("kiosk:returning") === pathAndQuery(resultsURL);
    session.remove("kiosk:returning");
    const place = session.get(placeKey(resultsURL));
    if (!place || !(returning || navigation === "back_forward" || navigation === "reload")) return;
    await appendPages(place.pages || [], place.top, place.scrollY || 0);
  }
  if (isList()) {
    // The browser's own restoring would come before the appended pages are back, and clamp to the short page.
    if ("scrollRestoration" in history) history.scrollRestoration = "manual";
    window.addEventListener("pagehide", savePlace);
  }
  rememberList();
  // A page's back link ("‹ Catalog" on an item, "‹ All requests" in the debugger) returns to the list it was opened
  // from: Back when that is the previous page (the cache or the saved place bring it back whole), else the
  // remembered address, its place put back.
  const backLink = $("#results") ? null : $("#main p.back a");
  const rememberedList = backLink && session.get(listKey(backLink.href));
  if (rememberedList) backLink.href = new URL(rememberedList, location.href).href;
  backLink?.addEventListener("click", event => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    session.set("kiosk:returning", pathAndQuery(backLink.href));
    if (document.referrer && withoutHash(document.referrer) === backLink.href && history.length > 1) {
      event.preventDefault();
      history.back();
    }
  });
  // An item that was open beside its list on a wide screen, reloaded (or come back to through history), gets its
  // list back beside it: the page becomes the list it was opened from (the remembered address, its filter and place
  // put back, else the back link's), which opens the item in its pane under the item's address. The list is a whole
  // page of its own, so its search box, live filter and feed work as on any other load. It is asked for first: when
  // it cannot be had (offline, and not kept), the item stays as served. The history entry says the item was in the
  // pane (its `{ detail }` state survives a reload); an item opened by itself, from a shared link, stays a page of
  // its own.
  const splitKey = "kiosk:split";
  async function splitAround() {
    const itemURL = withoutHash(location.href);
    if (!backLink || !wide.matches || history.state?.detail !== itemURL) return;
    const listURL = withoutHash(backLink.href);
    try {
      const doc = await fetchPage(listURL);
      if (!doc.getElementById("results") || !doc.getElementById("detail-pane") || withoutHash(location.href) !== itemURL) return;
    } catch {
      return;
    }
    session.set(splitKey, { list: pathAndQuery(listURL), item: itemURL });
    session.set("kiosk:returning", pathAndQuery(listURL));
    location.replace(listURL);
  }
  // The list side of it: the item goes into the pane and the address bar, the history entry keeping the pane's state.
  function openSplitItem() {
    const split = session.get(splitKey);
    session.remove(splitKey);
    if (!split || split.list !== pathAndQuery(resultsURL) || !hasPane() || !wide.matches) return;
    // The reader may have opened another row, or gone elsewhere, while the list's place came back: that choice stands.
    if (withoutHash(location.href) !== resultsURL || history.state !== null) return;
    history.replaceState({ detail: split.item }, "", split.item);
    openDetail(split.item, false).then(() => $$("#main a[aria-current=true]")[0]?.scrollIntoView({ block: "nearest" }));
  }

  // The network debugger's script (debug.js, linked by /debug pages only) and offline.js build on these;
  // nothing else is global.
  window.kiosk = Object.freeze({ swapResults, reloadResults, loadResults, isBusy: () => pending > 0, resultsURL: () => resultsURL,
    onConnectivity, watchConnectivity, ago, agoElement });

  // A confirmation opened at the foot of a list (the dogs list's Reset…) is brought into view, above the tab bar a phone
  // keeps over the page's end (the page's scroll-padding): its question and button opened out of sight.
  document.addEventListener("toggle", event => {
    const details = event.target;
    if (details instanceof HTMLDetailsElement && details.open && details.classList.contains("confirm-reset")) {
      details.querySelector("form")?.scrollIntoView({ block: "nearest" });
    }
  }, true);

  // Start: say the ages as of now (a page the service worker kept was written when it was saved), filter for a query
  // typed before the script ran, page on scroll, watch connectivity, and wait for a revalidation in progress.
  refreshAges();
  applyLocalFilter();
  // The place comes back first; a revalidation's reload waits for it (it keeps the pages put back).
  const placeRestored = isList() ? restorePlace().finally(observePager) : Promise.resolve(observePager());
  watchConnectivity();
  if ($("#results")?.dataset.revalidating === "true") placeRestored.finally(reloadResults);
  placeRestored.finally(openSplitItem);
  splitAround();
})();
