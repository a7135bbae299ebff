import Foundation

/// The app's only stylesheet, compiled in (no bundle resources to lose when the binary is copied).
/// Mobile first; the wide-screen layout and the dark theme are media queries.
enum Stylesheet {
    static let etag = "\"" + Fingerprint.hex(Array(css.utf8)) + "\""

    static let css = """
    :root { color-scheme: light dark; --bg: #fafafa; --fg: #1b1b1f; --muted: #5d5d66; --card: #ffffff;
      --line: #dcdce2; --accent: #0b57d0; --warn-bg: #fff4d6; --warn-fg: #5c4400; --err-bg: #fde7e9; --err-fg: #8a1020; }
    @media (prefers-color-scheme: dark) {
      :root { --bg: #121214; --fg: #ececf1; --muted: #a4a4ae; --card: #1d1d21; --line: #34343b; --accent: #8ab4f8;
        --warn-bg: #3b3000; --warn-fg: #ffe08a; --err-bg: #3d0e14; --err-fg: #ffb3bd; }
    }
    * { box-sizing: border-box; }
    body { margin: 0; font: 16px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--fg); }
    a { color: var(--accent); }
    header.top { position: sticky; top: 0; background: var(--card); border-bottom: 1px solid var(--line); z-index: 1; }
    header.top nav ul { display: flex; gap: .25rem; margin: 0; padding: .5rem; list-style: none; overflow-x: auto; }
    header.top nav a { display: block; padding: .4rem .7rem; border-radius: 999px; text-decoration: none; white-space: nowrap; }
    header.top nav a[aria-current="page"] { background: var(--accent); color: var(--card); }
    main { padding: 1rem; max-width: 70rem; margin: 0 auto; }
    h1 { font-size: 1.5rem; margin: .25rem 0 .75rem; }
    .status { color: var(--muted); font-size: .875rem; margin: .25rem 0; }
    .stale { background: var(--warn-bg); color: var(--warn-fg); border-radius: 4px; padding: 0 .35rem; }
    .banner { padding: .6rem .8rem; border-radius: 8px; margin: .5rem 0; }
    .banner.offline { background: var(--warn-bg); color: var(--warn-fg); }
    .banner.error { background: var(--err-bg); color: var(--err-fg); }
    form.search { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; margin: .5rem 0 1rem; }
    form.search label { display: flex; flex-direction: column; font-size: .8rem; color: var(--muted); }
    form.search input, form.search select, form.search button { font: inherit; padding: .4rem .5rem; border: 1px solid var(--line);
      border-radius: 6px; background: var(--card); color: var(--fg); }
    ul.items { list-style: none; margin: 0; padding: 0; display: grid; gap: .5rem; }
    ul.items li a { display: flex; gap: .75rem; align-items: center; padding: .5rem; background: var(--card);
      border: 1px solid var(--line); border-radius: 8px; color: inherit; text-decoration: none; }
    ul.items img { flex: none; object-fit: cover; border-radius: 6px; background: var(--line); }
    ul.items li { display: flex; align-items: center; gap: .5rem; }
    ul.items li > a { flex: 1; min-width: 0; }
    form.star, form.move, form.delete, form.reset { margin: 0; display: inline; }
    form.star button, form.move button, form.delete button, form.reset button { font: inherit; min-width: 2.75rem;
      min-height: 2.75rem; border: 1px solid var(--line); border-radius: 6px; background: var(--card); color: inherit; }
    form.star button[aria-pressed="true"] { color: #c90; }
    ul.items.edit li { padding: .5rem; border: 1px solid var(--line); border-radius: 8px; background: var(--card); }
    ul.items.edit .title { flex: 1; }
    .actions { display: flex; gap: .35rem; }
    .title { display: block; font-weight: 600; }
    .subtitle { display: block; color: var(--muted); font-size: .875rem; }
    .summary { display: -webkit-box; -webkit-line-clamp: 3; -webkit-box-orient: vertical; overflow: hidden; font-size: .875rem; }
    nav.pages ul { display: flex; flex-wrap: wrap; gap: .35rem; list-style: none; padding: 0; margin: 1rem 0; }
    nav.pages a, nav.pages span { display: inline-block; min-width: 2.25rem; text-align: center; padding: .35rem .5rem;
      border: 1px solid var(--line); border-radius: 6px; text-decoration: none; }
    nav.pages [aria-current="page"] { background: var(--accent); color: var(--card); }
    .detail img { max-width: 100%; height: auto; border-radius: 8px; background: var(--line); }
    .detail dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; }
    .detail dt { color: var(--muted); }
    .detail dd { margin: 0; }
    .keywords { display: flex; flex-wrap: wrap; gap: .35rem; list-style: none; padding: 0; }
    .keywords li { border: 1px solid var(--line); border-radius: 999px; padding: .1rem .6rem; font-size: .85rem; }
    .collection ul { display: flex; gap: .5rem; overflow-x: auto; list-style: none; padding: 0 0 .5rem; margin: 0; }
    .collection li { flex: none; width: 9rem; padding: .5rem; background: var(--card); border: 1px solid var(--line);
      border-radius: 8px; font-size: .85rem; }
    .collection li.more { width: auto; display: flex; align-items: center; }
    .attribution { color: var(--muted); font-size: .8rem; margin-top: 2rem; }
    .catalogs { list-style: none; padding: 0; display: grid; gap: .75rem; grid-template-columns: repeat(auto-fill, minmax(14rem, 1fr)); }
    .catalogs a { display: block; padding: 1rem; background: var(--card); border: 1px solid var(--line); border-radius: 10px;
      text-decoration: none; font-weight: 600; }
    .favorite { color: #c58a00; }
    @media (min-width: 48rem) {
      ul.items { grid-template-columns: repeat(2, 1fr); }
      h1 { font-size: 2rem; }
    }
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
