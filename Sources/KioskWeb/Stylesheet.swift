import Foundation

/// The app's only stylesheet, compiled in (no bundle resources to lose when the binary is copied).
/// Mobile first; the wide-screen layout and the dark theme are media queries.
enum Stylesheet {
    /// The content's fingerprint: in the stylesheet's URL, so a cached copy is never stale.
    static let version = Fingerprint.hex(Array(css.utf8))
    /// The stylesheet's ETag.
    static let etag = "\"" + version + "\""

    static let css = """
    :root { color-scheme: light dark; --bg: #fafafa; --fg: #1b1b1f; --muted: #55555e; --card: #ffffff;
      --line: #dcdce2; --accent: #0b57d0; --on-accent: #ffffff; --warn-bg: #fff4d6; --warn-fg: #5c4400;
      --err-bg: #fde7e9; --err-fg: #8a1020; --star: #8a5700; --tabbar: 3.75rem; }
    @media (prefers-color-scheme: dark) {
      :root { --bg: #121214; --fg: #ececf1; --muted: #a4a4ae; --card: #1d1d21; --line: #34343b; --accent: #8ab4f8;
        --on-accent: #0b1b36; --warn-bg: #3b3000; --warn-fg: #ffe08a; --err-bg: #3d0e14; --err-fg: #ffb3bd; --star: #f4c542; }
    }
    * { box-sizing: border-box; }
    [hidden] { display: none !important; }
    html { -webkit-text-size-adjust: 100%; }
    body { margin: 0; font: 16px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg);
      color: var(--fg); padding-bottom: calc(var(--tabbar) + env(safe-area-inset-bottom, 0px)); overflow-wrap: anywhere; }
    a { color: var(--accent); }
    :focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
    .skip { position: absolute; left: -999px; top: .5rem; background: var(--card); padding: .5rem 1rem; z-index: 10; }
    .skip:focus { left: .5rem; }

    /* Top bar: brand and language switch. */
    header.top { position: sticky; top: 0; z-index: 2; display: flex; align-items: center; justify-content: space-between;
      gap: .5rem; padding: .4rem 1rem; background: var(--card); border-bottom: 1px solid var(--line); }
    .brand { font-weight: 700; font-size: 1.15rem; text-decoration: none; color: var(--fg); }
    form.lang { margin: 0; }
    form.lang button { font: inherit; font-size: .85rem; padding: .3rem .7rem; min-height: 2.25rem; border: 1px solid var(--line);
      border-radius: 999px; background: var(--bg); color: var(--fg); cursor: pointer; }

    /* Catalog tabs: a bottom tab bar on a phone (five equal tabs, never a scrollbar), a sidebar when wide. */
    nav.tabs { position: fixed; left: 0; right: 0; bottom: 0; z-index: 2; background: var(--card); border-top: 1px solid var(--line);
      padding-bottom: env(safe-area-inset-bottom, 0px); }
    nav.tabs ul { display: grid; grid-template-columns: repeat(5, 1fr); margin: 0; padding: 0; list-style: none; }
    nav.tabs a { display: flex; flex-direction: column; align-items: center; justify-content: center; gap: .1rem;
      min-height: var(--tabbar); padding: .25rem .1rem; text-decoration: none; color: var(--muted); font-size: .7rem;
      text-align: center; line-height: 1.1; }
    nav.tabs .icon { font-size: 1.3rem; line-height: 1; }
    nav.tabs .long { display: none; }
    nav.tabs a[aria-current="page"] { color: var(--accent); font-weight: 600; }

    main { padding: 1rem; max-width: 80rem; margin: 0 auto; min-width: 0; }
    h1 { font-size: 1.5rem; margin: .25rem 0 .75rem; }
    .status { color: var(--muted); font-size: .875rem; margin: .25rem 0; }
    .stale { background: var(--warn-bg); color: var(--warn-fg); border-radius: 4px; padding: 0 .35rem; }
    .refreshing { font-style: italic; }
    .banner { padding: .6rem .8rem; border-radius: 8px; margin: .5rem 0; }
    .banner.offline { background: var(--warn-bg); color: var(--warn-fg); }
    .banner.error { background: var(--err-bg); color: var(--err-fg); }
    .banner a { color: inherit; font-weight: 600; }
    .empty { padding: 2rem 1rem; text-align: center; color: var(--muted); }
    #results[aria-busy="true"] { opacity: .6; transition: opacity .2s; }
    .hint { color: var(--muted); font-size: .8rem; margin: .25rem 0; }

    form.search { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; margin: .5rem 0 1rem; }
    form.search label { display: flex; flex-direction: column; font-size: .8rem; color: var(--muted); flex: 1 1 8rem; }
    form.search label:first-child { flex: 3 1 12rem; }
    form.search input, form.search select, form.search button { font: inherit; font-size: 1rem; padding: .45rem .55rem;
      min-height: 2.75rem; border: 1px solid var(--line); border-radius: 8px; background: var(--card); color: var(--fg); width: 100%; }
    form.search button { width: auto; }

    /* Rows. */
    ul.items { list-style: none; margin: 0; padding: 0; display: grid; gap: .5rem; }
    ul.items li { display: flex; align-items: center; gap: .5rem; min-width: 0; }
    ul.items li > a { flex: 1; min-width: 0; display: flex; gap: .75rem; align-items: center; padding: .5rem; background: var(--card);
      border: 1px solid var(--line); border-radius: 10px; color: inherit; text-decoration: none; }
    ul.items li > a[aria-current="true"] { border-color: var(--accent); box-shadow: 0 0 0 1px var(--accent); }
    ul.items img, .img-placeholder { flex: none; object-fit: cover; border-radius: 6px; background: var(--line); }
    .img-placeholder { display: inline-block; max-width: 100%; background: var(--line); border-radius: 6px; }
    .ph-75x75 { width: 75px; height: 75px; } .ph-64x64 { width: 64px; height: 64px; } .ph-80x80 { width: 80px; height: 80px; }
    .ph-150x225 { width: 150px; height: 225px; } .ph-300x300 { width: 300px; height: 300px; }
    .ph-300x450 { width: 300px; height: 450px; }
    ul.items .text { min-width: 0; }
    .title { display: block; font-weight: 600; }
    .subtitle { display: block; color: var(--muted); font-size: .875rem; }
    .summary { display: -webkit-box; -webkit-line-clamp: 3; -webkit-box-orient: vertical; overflow: hidden; font-size: .875rem; }
    .dot { display: inline-block; width: .6rem; height: .6rem; border-radius: 50%; margin-right: .4rem; vertical-align: middle; }
    .dot.alive { background: #2e9d4a; } .dot.dead { background: #d0342c; } .dot.unknown { background: #8c8c96; }
    ul.items.grid { grid-template-columns: repeat(auto-fill, minmax(10rem, 1fr)); }
    ul.items.grid li { flex-direction: column; align-items: stretch; position: relative; }
    ul.items.grid li > a { flex-direction: column; align-items: center; text-align: center; height: 100%; }
    ul.items.grid li > a img, ul.items.grid .img-placeholder { width: 100%; max-width: 150px; height: auto; aspect-ratio: 2 / 3; }
    ul.items.grid form.star { position: absolute; top: .35rem; right: .35rem; }

    form.star, form.move, form.delete, form.reset, form.mock { margin: 0; display: inline; }
    form.star button, form.move button, form.delete button, form.reset button, form.mock button { font: inherit; min-width: 2.75rem;
      min-height: 2.75rem; border: 1px solid var(--line); border-radius: 8px; background: var(--card); color: var(--fg); cursor: pointer; }
    form.star button[aria-pressed="true"] { color: var(--star); }
    form.reset { display: block; margin-top: .75rem; }
    ul.items.edit li { padding: .5rem; border: 1px solid var(--line); border-radius: 10px; background: var(--card); }
    ul.items.edit li.dragging { opacity: .5; }
    ul.items.edit li.drop-target { border-color: var(--accent); box-shadow: 0 -3px 0 var(--accent); }
    ul.items.edit li.drop-target.drop-after { box-shadow: 0 3px 0 var(--accent); }
    ul.items.edit .title { flex: 1; min-width: 0; }
    .grip { cursor: grab; color: var(--muted); font-size: 1.25rem; padding: 0 .25rem; }
    .actions { display: flex; gap: .35rem; flex-wrap: wrap; justify-content: flex-end; }
    .mode a { display: inline-block; padding: .45rem 1rem; border: 1px solid var(--line); border-radius: 999px; text-decoration: none;
      background: var(--card); }

    nav.pages ul { display: flex; flex-wrap: wrap; gap: .35rem; list-style: none; padding: 0; margin: 1rem 0; }
    nav.pages a, nav.pages span { display: inline-block; min-width: 2.75rem; min-height: 2.75rem; line-height: 2rem;
      text-align: center; padding: .35rem .5rem; border: 1px solid var(--line); border-radius: 8px; text-decoration: none; }
    nav.pages [aria-current="page"] { background: var(--accent); color: var(--on-accent); }

    /* Detail. */
    .back { margin: 0 0 .5rem; }
    .favorite-row { display: flex; align-items: center; gap: .5rem; margin: .25rem 0 .75rem; }
    .favorite { color: var(--star); font-weight: 600; }
    .detail img, .detail .img-placeholder { max-width: 100%; height: auto; border-radius: 10px; background: var(--line); }
    .detail dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; }
    .detail dt { color: var(--muted); }
    .detail dd { margin: 0; }
    .keywords { display: flex; flex-wrap: wrap; gap: .35rem; list-style: none; padding: 0; }
    .keywords li { border: 1px solid var(--line); border-radius: 999px; padding: .1rem .6rem; font-size: .85rem; }
    .collection ul { display: flex; gap: .5rem; overflow-x: auto; list-style: none; padding: 0 0 .5rem; margin: 0; }
    .collection li { flex: none; width: 9rem; padding: .5rem; background: var(--card); border: 1px solid var(--line);
      border-radius: 8px; font-size: .85rem; }
    .collection li.more { width: auto; display: flex; align-items: center; }
    .collection h2 { font-size: 1.1rem; }
    .attribution { color: var(--muted); font-size: .8rem; margin-top: 2rem; }

    .catalogs { list-style: none; padding: 0; display: grid; gap: .75rem; grid-template-columns: repeat(auto-fill, minmax(15rem, 1fr)); }
    .catalogs a { display: grid; grid-template-columns: auto 1fr; gap: 0 .75rem; align-items: center; padding: 1rem;
      background: var(--card); border: 1px solid var(--line); border-radius: 12px; text-decoration: none; color: inherit; }
    .catalogs .icon { grid-row: span 2; font-size: 2rem; }
    .catalogs .title { color: var(--accent); }

    /* The network debugger. */
    .table-scroll { overflow-x: auto; }
    table.requests { border-collapse: collapse; width: 100%; font-size: .85rem; }
    table.requests th, table.requests td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line);
      vertical-align: top; }
    table.requests td.url { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; overflow-wrap: anywhere; }
    table.requests td.num { text-align: right; white-space: nowrap; }
    table.requests th, table.requests td:not(.url) { white-space: nowrap; }
    .st2 { color: #1e7b34; } .st4, .st5, .st0 { color: var(--err-fg); font-weight: 600; } .st-store { color: var(--muted); }
    .decision { border: 1px solid var(--line); border-radius: 999px; padding: 0 .45rem; white-space: nowrap; }
    .decision.network, .decision.revalidated { background: var(--card); }
    .decision.offline, .decision.stale-on-error { background: var(--warn-bg); color: var(--warn-fg); }
    .decision.mocked, .decision.edited { background: var(--err-bg); color: var(--err-fg); }
    .debug .url { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .85rem; overflow-wrap: anywhere; }
    dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; font-size: .9rem; }
    dl.facts dt { color: var(--muted); }
    dl.facts dd { margin: 0; overflow-wrap: anywhere; }
    dl.headers dd { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
    .json-tree { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .85rem; background: var(--card);
      border: 1px solid var(--line); border-radius: 8px; padding: .5rem; overflow-x: auto; }
    .json-tree ul { list-style: none; margin: 0; padding-left: 1.25rem; }
    .json-tree summary { cursor: pointer; }
    .json-tree .key { color: var(--accent); }
    .json-tree .string { color: #1e7b34; } .json-tree .number { color: #9a3412; }
    .json-tree .bool, .json-tree .null { color: #6d28d9; } .json-tree .count { color: var(--muted); }
    @media (prefers-color-scheme: dark) {
      .json-tree .string, .st2 { color: #7bd88f; } .json-tree .number { color: #fdba74; }
      .json-tree .bool, .json-tree .null { color: #c4b5fd; }
    }
    form.pause-editor { display: grid; gap: .75rem; }
    form.pause-editor label { display: flex; flex-direction: column; gap: .25rem; font-size: .85rem; color: var(--muted); }
    form.pause-editor textarea, form.pause-editor input { font: .85rem/1.4 ui-monospace, SFMono-Regular, Menlo, monospace;
      padding: .5rem; border: 1px solid var(--line); border-radius: 8px; background: var(--card); color: var(--fg); width: 100%; }
    form.pause-editor button, form.search button { font: inherit; min-height: 2.75rem; padding: .4rem .9rem; border: 1px solid var(--line);
      border-radius: 8px; background: var(--card); color: var(--fg); cursor: pointer; }
    .json-editor input, .json-editor select { font: inherit; padding: .15rem .3rem; border: 1px solid var(--line); border-radius: 4px;
      background: var(--bg); color: var(--fg); min-height: 1.9rem; }
    .json-editor input.key { color: var(--accent); width: 10rem; }
    .json-editor .scalar { display: inline-flex; gap: .25rem; flex-wrap: wrap; }
    .json-editor .scalar input { min-width: 12rem; }
    .json-editor [aria-invalid="true"] { border-color: var(--err-fg); outline: 2px solid var(--err-fg); }
    .json-editor li { margin: .15rem 0; }
    .json-editor button { font: inherit; min-width: 1.9rem; min-height: 1.9rem; padding: 0 .4rem; border: 1px solid var(--line);
      border-radius: 4px; background: var(--card); color: var(--fg); cursor: pointer; }
    pre.raw { white-space: pre-wrap; overflow-wrap: anywhere; font-size: .8rem; background: var(--card); padding: .5rem;
      border: 1px solid var(--line); border-radius: 8px; max-height: 40rem; overflow: auto; }

    @media (min-width: 48rem) {
      h1 { font-size: 2rem; }
      ul.items:not(.grid):not(.edit) { grid-template-columns: repeat(2, 1fr); }
    }
    /* Wide screens: the tabs become a sidebar, and the list and the detail sit side by side. */
    @media (min-width: 64rem) {
      body { padding-bottom: 0; display: grid; grid-template-columns: 15rem 1fr; grid-template-rows: auto 1fr; }
      header.top { grid-column: 1 / -1; }
      nav.tabs { position: sticky; top: 3.2rem; align-self: start; border-top: 0; border-right: 1px solid var(--line);
        height: calc(100vh - 3.2rem); background: var(--bg); }
      nav.tabs ul { display: flex; flex-direction: column; gap: .15rem; padding: .75rem .5rem; }
      nav.tabs a { flex-direction: row; justify-content: flex-start; gap: .6rem; min-height: 2.75rem; padding: .5rem .75rem;
        font-size: 1rem; border-radius: 8px; text-align: left; color: var(--fg); }
      nav.tabs a[aria-current="page"] { background: var(--accent); color: var(--on-accent); }
      nav.tabs .short { display: none; }
      nav.tabs .long { display: inline; }
      main { width: 100%; }
      .split:has(#detail-pane:not([hidden])) { display: grid; grid-template-columns: minmax(20rem, 28rem) 1fr; gap: 1.25rem;
        align-items: start; }
      .split:has(#detail-pane:not([hidden])) ul.items:not(.grid) { grid-template-columns: 1fr; }
      .split:has(#detail-pane:not([hidden])) ul.items.grid { grid-template-columns: repeat(auto-fill, minmax(8rem, 1fr)); }
      #detail-pane { position: sticky; top: 4rem; max-height: calc(100vh - 5rem); overflow-y: auto; padding: 1rem;
        background: var(--card); border: 1px solid var(--line); border-radius: 12px; }
    }
    @media (prefers-reduced-motion: reduce) { * { transition: none !important; } }
    """
}

/// A short content fingerprint for ETags (FNV-1a, 64 bits): a validator only, not a security hash.
enum Fingerprint {
    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return String(hash, radix: 16)
    }
}
