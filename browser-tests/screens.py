"""The screens every page-level test visits, with their paths resolved against a running server."""

from __future__ import annotations

import urllib.parse

# name -> (what the test opens, the expected <main data-view>, the expected HTTP status)
SCREEN_NAMES = [
    "home", "nyt", "marvel", "rickandmorty", "dogs",
    "nyt-detail", "marvel-detail", "rickandmorty-detail", "dogs-detail",
    "rickandmorty-location", "rickandmorty-episode",
    "favorites", "search", "dogs-edit", "not-found", "offline", "settings",
    "debug", "debug-request", "debug-endpoints", "debug-mocks", "debug-paused", "debug-rules", "debug-rule-form",
    "debug-composer",
]

VIEWS = {
    "home": "home", "nyt": "list", "marvel": "list", "rickandmorty": "list", "dogs": "list",
    "nyt-detail": "detail", "marvel-detail": "detail", "rickandmorty-detail": "detail", "dogs-detail": "detail",
    "rickandmorty-location": "detail", "rickandmorty-episode": "detail",
    "favorites": "favorites", "search": "search", "dogs-edit": "list", "not-found": "error", "offline": "offline", "settings": "settings",
    "debug": "debug", "debug-request": "debug", "debug-endpoints": "debug", "debug-mocks": "debug", "debug-paused": "debug",
    "debug-rules": "debug", "debug-rule-form": "debug", "debug-composer": "debug",
}


def resolve_screens(server) -> dict[str, str]:
    """Paths for every screen: one detail per catalog (the first item of its first page), a search, and
    a favorite starred first so the favorites screen shows a row."""
    paths = {"home": "/", "favorites": "/favorites", "search": "/rickandmorty?q=rick", "dogs-edit": "/dogs?edit=1",
             "not-found": "/no-such-catalog", "offline": "/offline", "settings": "/settings", "rickandmorty-location": "/rickandmorty/location-3?page=2",
             "rickandmorty-episode": "/rickandmorty/episode-1"}
    for source in ("nyt", "marvel", "rickandmorty", "dogs"):
        paths[source] = f"/{source}"
        first = server.api(f"/api/{source}")["items"][0]
        paths[f"{source}-detail"] = f"/{source}/" + urllib.parse.quote(first["itemID"], safe="")
    status = server.post_form("/favorites/rickandmorty/1", {"action": "add", "return": "/favorites"})
    assert status == 303, f"starring a character through the form answered {status}"
    # The network debugger: the request list, one request in full (a JSON tree), the registry, mocks, pauses,
    # rewrite rules, the rule form filled in from a logged request, and the composer.
    paths.update({"debug": "/debug", "debug-endpoints": "/debug/endpoints", "debug-mocks": "/debug/mocks",
                  "debug-paused": "/debug/paused", "debug-rules": "/debug/rules"})
    logged = server.api("/debug/api/requests?source=rickandmorty&status=2xx")
    paths["debug-request"] = f"/debug/requests/{logged[0]['id']}"
    paths["debug-rule-form"] = f"/debug/rules/new?request={logged[0]['id']}"
    paths["debug-composer"] = f"/debug/requests/{logged[0]['id']}/compose"
    return paths
