// What this device keeps of Kiosk, in one place for the pages and the service worker (sw.js imports this
// file): the saved pages and pictures (Cache Storage, with an index in IndexedDB for sizes, titles and
// least-recent use), the outbox of edits made while Kiosk was unreachable, and the device's settings.
// Only the service worker writes pages and pictures; pages read, clear and queue.

(() => {
  "use strict";

  const DATABASE = "kiosk-device";
  const caches_ = { pages: "kiosk-pages", images: "kiosk-images", assets: "kiosk-assets" };
  const megabyte = 1024 * 1024;
  const defaultLimit = 50 * megabyte;
  // A hit refreshes an entry's place in the eviction order at most once a minute: reading a saved page should
  // not cost a write every time.
  const touchInterval = 60 * 1000;

  // Who creates the database. A page never does at load: a page frozen in the back/forward cache in the middle
  // of creating or upgrading it holds every other opener (the service worker's included) until the browser
  // drops that page — minutes, in Chromium, during which the worker could not even activate. So the worker
  // creates it, a page opens only what exists (reads meanwhile answer as for an empty device), and only a
  // person's own write from a page (a setting changed) may create it. A page closes its connection when it is
  // hidden, and no open waits for ever.
  const VERSION = 1;
  const inWorker = typeof WorkerGlobalScope !== "undefined" && self instanceof WorkerGlobalScope;
  const openTimeout = 10 * 1000;
  class NoDatabaseYet extends Error {}

  async function exists() {
    if (!indexedDB.databases) return true; // a browser that cannot tell opens it as before
    return (await indexedDB.databases()).some(entry => entry.name === DATABASE);
  }

  function open(create) {
    return new Promise((resolve, reject) => {
      // Without a version a page opens the database as it is, never upgrading it.
      const request = create ? indexedDB.open(DATABASE, VERSION) : indexedDB.open(DATABASE);
      let late = false;
      const timer = setTimeout(() => { late = true; reject(new Error("this device's storage did not open in time")); }, openTimeout);
      request.onupgradeneeded = () => {
        const db = request.result;
        if (!create) { request.transaction.abort(); return; } // a page that found none: not its to create
        db.createObjectStore("entries", { keyPath: "url" }).createIndex("usedAt", "usedAt");
        db.createObjectStore("outbox", { keyPath: "seq", autoIncrement: true });
        db.createObjectStore("settings", { keyPath: "name" });
      };
      request.onsuccess = () => {
        clearTimeout(timer);
        const db = request.result;
        if (late) return db.close();
        // A newer version of this file in another tab or worker wants to upgrade: let it.
        db.onversionchange = () => { db.close(); opening = null; };
        resolve(db);
      };
      request.onerror = () => {
        clearTimeout(timer);
        reject(create ? request.error : new NoDatabaseYet());
      };
    });
  }

  let opening = null;
  function database(create = inWorker) {
    if (!opening) {
      const attempt = (async () => {
        if (!create && !(await exists())) throw new NoDatabaseYet();
        return open(create);
      })();
      opening = attempt;
      attempt.catch(() => { if (opening === attempt) opening = null; });
    }
    return opening;
  }

  if (!inWorker) {
    self.addEventListener("pagehide", () => {
      const closing = opening;
      opening = null;
      closing?.then(db => db.close(), () => {});
    });
  }

  const done = request => new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });

  // Runs `work` in one transaction and resolves with its result once the transaction has committed, so a
  // caller never acts on a write that may still be rolled back (a full disk aborts at commit).
  // A read where no database exists yet resolves with undefined, as a store that holds nothing; a write from a page
  // then creates it.
  async function transaction(stores, mode, work) {
    let db;
    try {
      db = await database();
    } catch (error) {
      if (!(error instanceof NoDatabaseYet)) throw error;
      if (mode === "readonly") return undefined;
      db = await database(true);
    }
    return new Promise((resolve, reject) => {
      const tx = db.transaction(stores, mode);
      let result;
      tx.oncomplete = () => resolve(result);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error || new Error("IndexedDB transaction aborted"));
      Promise.resolve(work(tx)).then(value => { result = value; }, error => { try { tx.abort(); } catch { /* done already */ } reject(error); });
    });
  }

  // The key of a saved page or picture: its path and query, without what does not change the content (the
  // fragment, and `refresh`, which only asks the server to revalidate).
  function key(url) {
    const parsed = new URL(url, self.location.origin);
    parsed.searchParams.delete("refresh");
    parsed.searchParams.sort();
    return parsed.pathname + (parsed.searchParams.size ? "?" + parsed.searchParams : "");
  }
  const absolute = path => new URL(path, self.location.origin).href;

  // Settings ------------------------------------------------------------------------------------------

  async function setting(name, fallback) {
    const row = await transaction(["settings"], "readonly", tx => done(tx.objectStore("settings").get(name)));
    return row === undefined ? fallback : row.value;
  }
  const setSetting = (name, value) => transaction(["settings"], "readwrite", tx => done(tx.objectStore("settings").put({ name, value })));
  const limit = () => setting("limitBytes", defaultLimit);

  // Saved pages and pictures --------------------------------------------------------------------------

  // Saves `response` under `url` (a page or a picture), then evicts the least recently used entries until the
  // device is within its limit. `meta` holds a page's title, the content-addressed assets it links and the paths its
  // forms post to.
  async function save(kind, url, response, meta = {}) {
    const path = key(url);
    const body = await response.blob();
    const headers = new Headers(response.headers);
    const now = Date.now();
    headers.set("X-Kiosk-Saved-At", String(now));
    const cache = await caches.open(kind === "page" ? caches_.pages : caches_.images);
    await cache.put(absolute(path), new Response(body, { status: response.status, statusText: response.statusText, headers }));
    await transaction(["entries"], "readwrite", tx => done(tx.objectStore("entries").put({
      url: path, kind, bytes: body.size, savedAt: now, usedAt: now, title: meta.title || "", assets: meta.assets || [],
      actions: meta.actions,
    })));
    // The full count (every entry read) only when an estimate says the limit may be passed: the estimate
    // counts a page saved again twice, so it errs towards counting, never towards a device over its limit.
    if (knownTotal === null) knownTotal = (await totals()).bytes; else knownTotal += body.size;
    if (knownTotal > await limit()) await evict();
    return path;
  }
  let knownTotal = null;

  // The saved response for `url` and when it was saved, or null. A hit counts as a use, recorded beside the
  // answer rather than before it (the page or picture is what someone is waiting for).
  async function saved(kind, url) {
    const path = key(url);
    const response = await caches.match(absolute(path), { cacheName: kind === "page" ? caches_.pages : caches_.images });
    if (!response) return null;
    const touched = touch(path).catch(() => {});
    return { response, savedAt: Number(response.headers.get("X-Kiosk-Saved-At")) || 0, touched };
  }

  // Whether a page or picture is saved for `url`, without counting it as a use.
  async function has(kind, url) {
    return !!(await caches.match(absolute(key(url)), { cacheName: kind === "page" ? caches_.pages : caches_.images }));
  }

  function touch(path) {
    return transaction(["entries"], "readwrite", async tx => {
      const store = tx.objectStore("entries");
      const found = await done(store.get(path));
      if (found && Date.now() - found.usedAt > touchInterval) {
        found.usedAt = Date.now();
        store.put(found);
      }
    });
  }

  async function entries(kind) {
    const all = (await transaction(["entries"], "readonly", tx => done(tx.objectStore("entries").getAll()))) || [];
    return kind ? all.filter(entry => entry.kind === kind) : all;
  }

  // What the device holds: bytes, pages and pictures.
  async function totals() {
    const all = await entries();
    return {
      bytes: all.reduce((sum, entry) => sum + entry.bytes, 0),
      pages: all.filter(entry => entry.kind === "page").length,
      images: all.filter(entry => entry.kind === "image").length,
    };
  }

  // Least recently used first, until the total is within the limit.
  async function evict() {
    const max = await limit();
    const all = (await entries()).sort((a, b) => a.usedAt - b.usedAt);
    let total = all.reduce((sum, entry) => sum + entry.bytes, 0);
    const victims = [];
    for (const entry of all) {
      if (total <= max) break;
      victims.push(entry);
      total -= entry.bytes;
    }
    knownTotal = total;
    if (victims.length === 0) return [];
    await remove(victims);
    knownTotal = total;
    return victims.map(entry => entry.url);
  }

  async function remove(victims) {
    knownTotal = null;
    const pages = await caches.open(caches_.pages), images = await caches.open(caches_.images);
    await Promise.all(victims.map(entry => (entry.kind === "page" ? pages : images).delete(absolute(entry.url))));
    await transaction(["entries"], "readwrite", tx => {
      const store = tx.objectStore("entries");
      for (const entry of victims) store.delete(entry.url);
    });
  }

  // Forgets every saved page and picture (the app shell and the outbox stay: edits are not "saved pages").
  async function clear() {
    knownTotal = null;
    await caches.delete(caches_.pages);
    await caches.delete(caches_.images);
    await transaction(["entries", "settings"], "readwrite", tx => {
      tx.objectStore("entries").clear();
      tx.objectStore("settings").delete("savedAt");
    });
  }

  // The outbox -----------------------------------------------------------------------------------------

  // A write queued in order: { key (its Idempotency-Key), path, body (the form), createdAt, returnTo, fromPage (a
  // page of Kiosk sent it with fetch: only such a write's token is renewed) }.
  const enqueue = write => transaction(["outbox"], "readwrite", tx => done(tx.objectStore("outbox").add(write)));
  const pending = async () => (await transaction(["outbox"], "readonly", tx => done(tx.objectStore("outbox").getAll()))) || [];
  const dequeue = seq => transaction(["outbox"], "readwrite", tx => done(tx.objectStore("outbox").delete(seq)));
  const updateWrite = write => transaction(["outbox"], "readwrite", tx => done(tx.objectStore("outbox").put(write)));

  // Writes Kiosk refused (a 4xx: an unknown item, a bad form), kept for the page to say so, then forgotten.
  async function recordFailure(write, status, reason) {
    const failures = await setting("failures", []);
    failures.push({ path: write.path, status, reason, at: Date.now() });
    await setSetting("failures", failures.slice(-20));
  }
  async function takeFailures() {
    const failures = await setting("failures", []);
    if (failures.length) await setSetting("failures", []);
    return failures;
  }

  // Creates the database if this device has none yet (the worker, at install).
  const prepare = () => database(true).then(() => undefined);

  self.KioskDevice = Object.freeze({
    caches: caches_, defaultLimit, key, prepare, setting, setSetting, limit, save, saved, has, entries, totals, evict, remove, clear,
    enqueue, pending, dequeue, updateWrite, recordFailure, takeFailures,
  });
})();
