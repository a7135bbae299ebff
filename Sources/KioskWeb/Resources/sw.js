// Kiosk's service worker: keeps the app readable on this device when the Kiosk server itself cannot be
// reached (a laptop asleep, a phone out of the house), and keeps edits made meanwhile until it can.
//   - The app shell (stylesheet, scripts, icons; the home, offline and manifest documents) is precached per
//     version; content-addressed assets are kept while any saved page still links them, so an old page never
//     renders with a new shell's files.
//   - Kiosk's pages: network first with a short timeout, then the copy saved on this device, then the offline
//     page. Every page fetched is saved; a saved copy shown carries data-saved-at for the banner.
//   - Pictures (/image): cache first. Pages and pictures share one bound, least recently used evicted first.
//   - Favorites and dogs edits that Kiosk's own pages make (with fetch, from a window this worker controls) go
//     through the outbox: queued in IndexedDB, sent in order with an Idempotency-Key each, so a write replayed
//     after a lost answer is applied once. A form another site submits here is a navigation: it is never
//     queued nor signed, but goes to the network untouched, where the CSRF and Origin checks refuse it.
// The server prepends `self.kioskShell = {version, assets, pages, clientScript, deviceScript}` (see ServiceWorker.swift);
// every address of Kiosk's it knows comes from the client table (`self.KioskClient.routes`, Routes.swift).

"use strict";

importScripts(self.kioskShell.clientScript, self.kioskShell.deviceScript);

const shell = self.kioskShell;
const device = self.KioskDevice;
const routes = self.KioskClient.routes;
const shellCache = `kiosk-shell-${shell.version}`;
// Long enough for a page rendered from Kiosk's store, short enough that a sleeping server is not waited for.
const networkTimeout = 3000;
// A refresh the reader asked for (`?refresh=1`) waits for the catalog through Kiosk (its own limit is 15 s): the page
// shown stays on screen meanwhile, and giving up early would show the saved copy of a Kiosk that was answering.
const refreshTimeout = 20000;
// Kiosk's answers that never come from this device: the JSON API (and the connectivity probe), the debugger,
// pairing, and this script. A prefix ending in "/" covers what is below it; another covers itself and below.
const networkOnly = path => routes.networkOnly.some(prefix =>
  prefix.endsWith("/") ? path.startsWith(prefix) : path === prefix || path.startsWith(prefix + "/"));
// The writes the outbox carries (a favorite set on or off; an item of a list its user orders deleted or moved,
// or that list reset), each with what it shows on a page while it waits.
const queuedWrites = routes.writes.map(write => ({ ...write, regex: new RegExp(write.pattern) }));
const queuedWrite = path => queuedWrites.find(write => write.regex.test(path));

self.addEventListener("install", event => {
  // Where the browser has static routing (Chromium), it reads the shell's immutable files from the cache itself,
  // without waking this worker for each one (a miss goes to the network); elsewhere `asset` below does it.
  try {
    event.addRoutes?.({ condition: { urlPattern: routes.staticPrefix + "*" }, source: { cacheName: device.caches.assets } })?.catch?.(() => {});
  } catch { /* not supported as written: the fetch handler serves them */ }
  event.waitUntil((async () => {
    // Assets are immutable by address: fetch only those this device lacks. Any failure fails the install, and
    // the old version stays in charge.
    const assets = await caches.open(device.caches.assets);
    const missing = [];
    for (const path of shell.assets) if (!(await assets.match(path))) missing.push(path);
    await assets.addAll(missing);
    // The device's database is made here, where no back/forward cache can freeze it half made (device.js).
    await device.prepare().catch(() => { /* made by the first write instead */ });
    await saveShellDocuments();
  })());
});

// The shell's documents (home, offline page, manifest), in the language Kiosk speaks to this device now. Best effort:
// a redirect (a device not paired yet) or an error is not kept.
async function saveShellDocuments() {
  const documents = await caches.open(shellCache);
  await Promise.all(shell.pages.map(async path => {
    try {
      const response = await fetch(path, { cache: "reload", credentials: "same-origin" });
      if (response.ok && !response.redirected) await documents.put(path, await copy(response));
    } catch { /* kept from the network later */ }
  }));
}

// A page that comes in another language than the shell's documents were saved in (the reader switched, with the
// header's button or the browser's languages) has them saved again: the offline page, shown for a page this device
// never saved, speaks the reader's language, as the pages saved do.
async function keepShellLanguage(response) {
  const language = response.headers.get("Content-Language");
  // (Not a page a device not paired yet was sent away from, to the pairing page: the offline page would be refused too.)
  if (!response.ok || response.redirected || !language) return;
  const offline = await caches.match(routes.offline, { cacheName: shellCache });
  // None saved yet is saved now: a phone's worker installs on the pairing page, before the device may read the offline
  // page (its fetch was sent to /pair), and the first page Kiosk serves it after pairing is the time.
  if (offline && offline.headers.get("Content-Language") === language) return;
  await saveShellDocuments();
}

// Activation waits for nothing but the caches: until it is done, every navigation of a page this worker controls
// waits for it, so the device's database (which another context can hold up) is read afterwards (`tidy`).
self.addEventListener("activate", event => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith("kiosk-shell-") && name !== shellCache) await caches.delete(name);
    }
    // The page's request starts while this worker boots, rather than after (no-op where unsupported).
    await self.registration.navigationPreload?.enable().catch(() => {});
    await self.clients.claim();
  })());
});

// Once per start of this worker, beside the first page it serves: assets of older versions go once no saved page
// links them.
let tidying = null;
function tidy() {
  tidying ||= (async () => {
    const linked = new Set(shell.assets);
    for (const entry of await device.entries("page")) for (const asset of entry.assets) linked.add(asset);
    const assets = await caches.open(device.caches.assets);
    for (const request of await assets.keys()) {
      if (!linked.has(new URL(request.url).pathname)) await assets.delete(request);
    }
  })().catch(() => { /* kept until the next start */ });
  return tidying;
}

self.addEventListener("message", event => {
  const type = event.data?.type;
  if (type === "skip-waiting") self.skipWaiting();
  else if (type === "flush") event.waitUntil(flush());
});

// Background Sync, where the browser has it: the outbox is sent when the device is back online even if no
// Kiosk page is open.
self.addEventListener("sync", event => {
  if (event.tag === "kiosk-outbox") event.waitUntil(flush().then(async () => {
    await refreshing;
    if ((await device.pending()).length) throw new Error("Kiosk is still unreachable");
  }));
});

self.addEventListener("fetch", event => {
  const request = event.request;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (networkOnly(url.pathname)) {
    // A page that never comes from the device (the debugger, pairing) opened while Kiosk is out of reach: the device's
    // offline page, never the browser's error page (in the installed app, which has no browser buttons, a dead end).
    // A GET only: a POST navigation may come from any site, and must reach Kiosk as that site sent it.
    if (request.method === "GET" && request.mode === "navigate") event.respondWith(networkPage(event));
    return;
  }
  if (request.method === "POST") {
    // Only a fetch from one of this worker's own windows: a navigation may come from any site (a form posted here,
    // with or without a referrer), and queueing it would sign it with this device's token.
    const queued = queuedWrite(url.pathname);
    if (request.mode !== "navigate" && event.clientId && queued) {
      const writing = write(event, queued);
      writesUnderWay.add(writing);
      writing.finally(() => writesUnderWay.delete(writing)).catch(() => {});
      event.respondWith(writing);
    }
    return;
  }
  if (request.method !== "GET") return;
  if (url.pathname.startsWith(routes.staticPrefix)) event.respondWith(asset(request));
  else if (url.pathname === routes.image) event.respondWith(picture(event));
  else if (request.mode === "navigate" || (request.headers.get("Accept") || "").includes("text/html")) event.respondWith(page(event));
  else if (shell.pages.includes(url.pathname)) event.respondWith(shellDocument(request));
});

// The writes of this worker's pages being queued and sent now (`write`): a page asked for meanwhile waits for them.
const writesUnderWay = new Set();

// A response this worker may keep and hand to a navigation: same body, status and headers, no redirect flag.
async function copy(response) {
  return new Response(await response.blob(), { status: response.status, statusText: response.statusText, headers: response.headers });
}

// Whether Kiosk answers its connectivity probe (which reads Kiosk's own state, never a catalog) within a second.
async function kioskAnswers() {
  try {
    const response = await withTimeout(fetch(routes.connectivity, { cache: "no-store", credentials: "same-origin" }), 1000);
    return response.ok;
  } catch {
    return false;
  }
}

function withTimeout(promise, milliseconds) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(Object.assign(new Error("timed out"), { timedOut: true })), milliseconds);
    promise.then(value => { clearTimeout(timer); resolve(value); }, error => { clearTimeout(timer); reject(error); });
  });
}

async function asset(request) {
  const cached = await caches.match(request, { cacheName: device.caches.assets });
  if (cached) return cached;
  const response = await fetch(request);
  if (response.ok) {
    const cache = await caches.open(device.caches.assets);
    await cache.put(request, response.clone());
  }
  return response;
}

async function picture(event) {
  const request = event.request;
  const saved = await device.saved("image", request.url);
  if (saved) {
    event.waitUntil(saved.touched);
    return saved.response;
  }
  try {
    const response = await fetch(request);
    const type = response.headers.get("Content-Type") || "";
    if (response.ok && type.startsWith("image/")) {
      // Kept beside the answer; a full device shows the picture without keeping it.
      event.waitUntil(device.save("image", request.url, response.clone()).catch(() => {}));
    }
    return response;
  } catch {
    // The page's script turns a picture that fails into a placeholder of the same size.
    return new Response("", { status: 504, statusText: "Kiosk is unreachable" });
  }
}

async function shellDocument(request) {
  try {
    const response = await withTimeout(fetch(request), networkTimeout);
    if (response.ok) {
      const cache = await caches.open(shellCache);
      await cache.put(new URL(request.url).pathname, await copy(response.clone()));
    }
    return response;
  } catch {
    return (await caches.match(new URL(request.url).pathname, { cacheName: shellCache })) || Response.error();
  }
}

// Text Kiosk escaped into its HTML (the five entities HTML.swift writes), as text again.
function unescapeHTML(text) {
  return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, "\"").replace(/&#39;/g, "'").replace(/&amp;/g, "&");
}

// A quoted address under the assets' prefix, in a page's HTML.
const linkedAsset = new RegExp(`"(${routes.staticPrefix.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}[^"]+)"`, "g");

// What a saved page says about itself: its title, and the shell files it links (kept while it is).
function describe(html) {
  const title = unescapeHTML(/<title>([^<]*)<\/title>/.exec(html)?.[1] || "");
  const assets = [...new Set([...html.matchAll(linkedAsset)].map(match => match[1]))];
  // The writes its forms post to, for a change Kiosk takes to find the saved pages showing it without reading them.
  const actions = [...new Set([...html.matchAll(/<form[^>]* action="(\/[^"]*)"/g)].map(match => unescapeHTML(match[1])))];
  return { title, assets, actions };
}

// Saves a page Kiosk just served (not a redirect, an error, anything but HTML, or one Kiosk says must not be kept:
// a page made from an answer the debugger edited is no-store, as Kiosk's own store keeps none).
async function keepPage(url, response) {
  const type = response.headers.get("Content-Type") || "";
  if (!response.ok || response.redirected || response.type !== "basic" || !type.startsWith("text/html")) return;
  if (/(^|,)\s*no-store\s*(,|$)/i.test(response.headers.get("Cache-Control") || "")) return;
  const html = await response.clone().text();
  await device.save("page", url, response, describe(html)).catch(() => { /* full: shown, not kept */ });
  if (new URL(url).pathname === routes.home) {
    const cache = await caches.open(shellCache);
    await cache.put(routes.home, new Response(html, { status: 200, headers: response.headers }));
  }
}

// The saved copy of a page as the device shows it: marked with when it was saved and why it is shown, for the banner.
async function savedPage(url, reason = "unreachable") {
  const saved = await device.saved("page", url);
  let response = saved?.response, savedAt = saved?.savedAt || 0;
  saved?.touched.catch(() => {});
  if (!response) {
    response = await caches.match(new URL(url).pathname === routes.home ? routes.home : device.key(url), { cacheName: shellCache });
    if (!response) return null;
    savedAt = Number(response.headers.get("X-Kiosk-Saved-At")) || Date.parse(response.headers.get("Date") || "") || 0;
  }
  const html = (await response.text()).replace("<body ", `<body data-saved-at="${Number(savedAt) || 0}" data-saved-reason="${reason}" `);
  const headers = new Headers(response.headers);
  headers.delete("Content-Length");
  return { response: new Response(html, { status: 200, headers }), savedAt };
}

async function offlinePage() {
  const response = await caches.match(routes.offline, { cacheName: shellCache });
  if (!response) return Response.error();
  const html = (await response.text()).replace("<body ", `<body data-saved-at="0" `);
  const headers = new Headers(response.headers);
  headers.delete("Content-Length");
  // Tells the page's script this is not Kiosk's answer but the device's (app.js stays on the page it has).
  headers.set("X-Kiosk-Unreachable", "1");
  return new Response(html, { status: 503, statusText: "Kiosk is unreachable", headers });
}

// A navigation to a page Kiosk alone answers: Kiosk's answer as it comes (redirects and downloads included), else the
// offline page — at once when Kiosk is refused, and after `networkTimeout` when it does not even answer the
// connectivity probe (a laptop asleep), rather than the browser's own wait.
async function networkPage(event) {
  const asked = (async () => (await event.preloadResponse?.catch(() => undefined)) || fetch(event.request))();
  asked.catch(() => {});
  try {
    const slow = Symbol("slow");
    const first = await Promise.race([asked, new Promise(resolve => setTimeout(() => resolve(slow), networkTimeout))]);
    if (first !== slow) return first;
    if (!(await kioskAnswers())) return offlinePage();
    return await asked;
  } catch {
    return offlinePage();
  }
}

async function tellClient(clientId, message) {
  const client = clientId && await self.clients.get(clientId);
  client?.postMessage(message);
}

async function page(event) {
  const request = event.request;
  // A script waiting for a revalidation (X-Kiosk-Wait) waits for the network; a person does not.
  const waits = request.headers.has("X-Kiosk-Wait");
  const preloaded = request.mode === "navigate" && event.preloadResponse ? event.preloadResponse.catch(() => undefined) : null;
  // A write on its way (a deletion, and a reload at once) goes first: the page asked for meanwhile (the preload's too)
  // would show what it changes as it was. Not for long: a write waiting on a slow Kiosk is shown as waiting anyway.
  const afterWrites = writesUnderWay.size > 0
    ? Promise.race([Promise.allSettled([...writesUnderWay]), new Promise(resolve => setTimeout(resolve, 3000))]) : null;
  // The page goes to the browser as soon as it arrives; keeping a copy happens beside it, not before it.
  let kept = Promise.resolve();
  const asked = afterWrites ? afterWrites.then(() => fetch(request)) : Promise.resolve(preloaded).then(response => response || fetch(request));
  const network = asked.then(response => {
    kept = keepPage(request.url, response.clone()).catch(() => {});
    return response;
  });
  // Kiosk answered: whatever the outbox holds can go now.
  event.waitUntil(network.then(async response => { await kept; if (response.ok) { await flushIfNeeded(); await refreshing; } }, () => {}));
  event.waitUntil(network.then(keepShellLanguage).catch(() => {}));
  event.waitUntil(tidy());
  const refresh = new URL(request.url).searchParams.has("refresh");
  try {
    // The page's own time starts once the writes before it are through (they may take up to 3 s of their own).
    if (afterWrites) await afterWrites;
    return await (waits ? network : withTimeout(network, refresh ? refreshTimeout : networkTimeout));
  } catch (error) {
    // No answer in time is not no answer: Kiosk may be up, waiting for a slow catalog, and the banner says which.
    const reason = error?.timedOut ? "slow" : "unreachable";
    const saved = await savedPage(request.url, reason);
    if (saved) {
      if (request.mode !== "navigate") event.waitUntil(tellClient(event.clientId, { type: "unreachable", savedAt: saved.savedAt, reason }));
      return saved.response;
    }
    // Nothing saved, and no answer yet: Kiosk may be working on it (a search waiting on a slow catalog, whose own limit
    // is 15 s), or be out of reach (a laptop asleep). Its connectivity answer, which asks no catalog, tells which at
    // once: if Kiosk gives it, the page is waited for, as long as a refresh is, rather than a page saying Kiosk cannot
    // be reached while it is working on it.
    if (error?.timedOut && !refresh && await kioskAnswers()) {
      try {
        return await withTimeout(network, refreshTimeout - networkTimeout);
      } catch { /* no answer in that time either */ }
    }
    return request.mode === "navigate" ? offlinePage() : Response.error();
  }
}

// Where the browser goes after a write: the form's own `return` (a local path: every write form of Kiosk's has
// one), else the page it came from.
function returnPath(form, referrer) {
  const asked = form.get("return");
  if (asked && asked.startsWith("/") && !asked.startsWith("//") && !asked.includes("\\")) return asked;
  try {
    const from = new URL(referrer);
    if (from.origin === self.location.origin) return from.pathname + from.search;
  } catch { /* no referrer */ }
  return routes.home;
}

// What a waiting write shows on a page, of the kind the client table gives it: the star of the form posting to
// this path, set on or off; or the row of the item (group 2 of the pattern) in its catalog's list (group 1)
// leaving it or moving to `to`.
function effectOf(queued, path, form) {
  const match = queued.regex.exec(path) || [];
  const part = index => { try { return decodeURIComponent(match[index] || ""); } catch { return match[index] || ""; } };
  return { kind: queued.effect, source: part(1), id: part(2), on: form.get("action") === "add", to: Number(form.get("to")) };
}

// A write one of Kiosk's pages made: queued, then the outbox is sent in order. Kiosk's answer when it was reached;
// otherwise the page to return to, from this device, with the write shown as waiting.
async function write(event, kind) {
  const request = event.request;
  // The window that made it must be one of this origin's (a worker controls no other; checked all the same, since
  // what is queued here is signed again when its token is out of date).
  const client = await self.clients.get(event.clientId);
  if (!client || new URL(client.url).origin !== self.location.origin) return fetch(request);
  const url = new URL(request.url);
  const body = await request.text();
  const form = new URLSearchParams(body);
  const queued = {
    key: request.headers.get("Idempotency-Key") || self.crypto.randomUUID(),
    path: url.pathname, body, createdAt: Date.now(), returnTo: returnPath(form, request.referrer),
    effect: effectOf(kind, url.pathname, form), fromPage: true, clientId: event.clientId,
  };
  queued.seq = await device.enqueue(queued);
  awaited.add(queued.seq);
  mayHoldWrites = true;
  // A Kiosk that takes no write in a page's time (a laptop asleep, a process stopped) leaves this one waiting, shown
  // as such, as a page is after the same time: the send under way goes on, and the outbox says when it is through.
  const run = flush();
  event.waitUntil(run.catch(() => {}));
  let reason = "unreachable";
  await withTimeout(run, networkTimeout).catch(error => { if (error?.timedOut) reason = "slow"; });
  awaited.delete(queued.seq);
  event.waitUntil(refreshing);
  // Whichever run of the outbox sent it (one already under way may have), its answer is here.
  const answer = delivered.get(queued.seq);
  delivered.delete(queued.seq);
  if (answer) return answer;
  await self.registration.sync?.register("kiosk-outbox").catch(() => {});
  await notify({ type: "outbox" });
  const saved = await savedPage(new URL(queued.returnTo, self.location.origin).href, reason);
  if (saved) event.waitUntil(tellClient(event.clientId, { type: "unreachable", savedAt: saved.savedAt, reason }));
  return saved ? saved.response : offlinePage();
}

// Kiosk's answers to writes sent, by outbox sequence number, until the request that queued the write takes
// its own (writes sent for nobody waiting, such as those queued before a restart, are dropped past 50).
const delivered = new Map();
// The writes whose pages wait for Kiosk's answer (`write`), by sequence number: a page given its own answer has
// already shown it, and is not told to load its list again for it.
const awaited = new Set();

// The outbox is sent by one loop at a time, in order; a call while one runs waits for it and runs again.
// `mayHoldWrites` spares a navigation the outbox's read once a run found it empty and nothing was queued since
// (pages queue through this worker; a new worker starts by looking).
let sending = Promise.resolve();
let mayHoldWrites = true;
function flushIfNeeded() {
  return mayHoldWrites ? flush() : Promise.resolve();
}
function flush() {
  const run = sending.then(sendAll, sendAll);
  sending = run.catch(() => {});
  return run;
}

// Sends every queued write in order until Kiosk cannot be reached, leaving each answer in `delivered`.
async function sendAll() {
  let sent = 0;
  const answeredTo = [];
  const queue = await device.pending();
  mayHoldWrites = queue.length > 0;
  for (const queued of queue) {
    let response;
    try {
      response = await send(queued);
      // A token that went out of date while the write waited (the browser dropped the session's cookie): the
      // write was refused, not applied, so it is sent again once with the page's current token. Only a write a
      // page of Kiosk queued with fetch (`fromPage`); one an older worker queued from a navigation, which another
      // site may have made, is never signed here.
      if (response.status === 403 && queued.fromPage && !queued.renewedToken) {
        const token = await currentToken();
        if (token) {
          const form = new URLSearchParams(queued.body);
          form.set("csrf", token);
          queued.body = form.toString();
          queued.renewedToken = true;
          await device.updateWrite(queued);
          response = await send(queued);
        }
      }
    } catch {
      // Unreachable: the rest waits, in order (and what Kiosk said of it before is no longer why).
      if (queued.refused) { delete queued.refused; await device.updateWrite(queued).catch(() => {}); }
      break;
    }
    // Kiosk is there but cannot take it now: failing (5xx), busy (429, 408), or this device is not paired (any
    // more) and is sent to the pairing page. The write waits, with those after it, for a later run.
    const toPairing = response.redirected && new URL(response.url).pathname.startsWith(routes.pair);
    if (response.status >= 500 || [401, 408, 429].includes(response.status) || toPairing) {
      // Kiosk's own words on why (a full disk), for the banner to say beside "waiting": it was reached. Any other
      // reason to wait (busy, pairing) clears them.
      const refused = response.status >= 500 ? (await reason(response.clone())).replace(/[.\s]+$/, "") : undefined;
      if (refused !== queued.refused) {
        if (refused) queued.refused = refused; else delete queued.refused;
        await device.updateWrite(queued).catch(() => {});
      }
      break;
    }
    if (response.status >= 400) {
      // Said in the tab that made it (another tab of the same list took its own edit); a tab since closed leaves it to
      // the next that looks.
      const why = await reason(response.clone());
      const maker = queued.clientId && await self.clients.get(queued.clientId);
      if (maker) maker.postMessage({ type: "failed", failures: [{ path: queued.path, status: response.status, reason: why }] });
      else await device.recordFailure(queued, response.status, why);
    } else refreshing = refreshing.then(() => refreshSavedPagesShowing(queued.path)).catch(() => {});
    await device.dequeue(queued.seq);
    delivered.set(queued.seq, response);
    if (delivered.size > 50) delivered.delete(delivered.keys().next().value);
    if (awaited.has(queued.seq)) answeredTo.push(queued.clientId);
    sent += 1;
  }
  if (sent === queue.length) mayHoldWrites = false;
  // Each window hears how many writes it has not seen answered: a star's own page swapped its star in, so a write it
  // waited for is no reason to fetch its whole list again (and say "Updated" over the star's own words).
  if (sent > 0) {
    for (const client of await self.clients.matchAll({ type: "window" })) {
      client.postMessage({ type: "outbox", sent: sent - answeredTo.filter(id => id === client.id).length });
    }
  }
}

// Saved pages showing what a write Kiosk took has changed — every page holding that write's form (an item's star on
// its page, its catalog's lists; a dog's row on the dogs editor), and those the client table says show it without one
// (the favorites and Home for a star; every list of the catalog for a row deleted, moved, restored or reset) — saved
// again as Kiosk shows them now, in the background: offline, they showed the item unstarred or missing from the
// favorites, and the deleted dog back. Stops at the first page Kiosk does not answer.
let refreshing = Promise.resolve();
async function refreshSavedPagesShowing(path) {
  const form = `action="${path}"`;
  const written = queuedWrite(path);
  const source = written?.regex.exec(path)?.[1] ?? "";
  const showing = new Set((written?.shownOn ?? []).map(page => page.replace("{source}", source)));
  const pages = await caches.open(device.caches.pages);
  for (const entry of await device.entries("page")) {
    const url = new URL(entry.url, self.location.origin);
    // Known by the forms noted when it was saved; a page saved by an older worker, which noted none, is read.
    if (!showing.has(url.pathname)
        && (entry.actions ? !entry.actions.includes(path) : !(await (await pages.match(url.href))?.text() ?? "").includes(form))) continue;
    await keepPage(url.href, await fetch(url.href, { credentials: "same-origin", cache: "no-store" }));
  }
}

function send(queued) {
  return fetch(queued.path, {
    method: "POST", body: queued.body, credentials: "same-origin", redirect: "follow",
    headers: { "Content-Type": "application/x-www-form-urlencoded", "Idempotency-Key": queued.key, Accept: "text/html" },
  });
}

// The CSRF token of a page Kiosk renders now (the forms carry the cookie's value).
async function currentToken() {
  try {
    const html = await (await fetch(routes.offline, { credentials: "same-origin", cache: "no-store" })).text();
    return /name="csrf" value="([0-9a-f]{64})"/.exec(html)?.[1] || null;
  } catch {
    return null;
  }
}

// Kiosk's message on its error page.
async function reason(response) {
  try {
    const html = await response.text();
    return unescapeHTML(/<p class="banner error" role="alert">([^<]*)<\/p>/.exec(html)?.[1] || response.statusText || String(response.status));
  } catch {
    return String(response.status);
  }
}

async function notify(message) {
  for (const client of await self.clients.matchAll({ type: "window" })) client.postMessage(message);
}
