"""The store of the app serving the current request, for the route modules.

`create_app` installs the store with `install_store`; a view reaches it with `get_store()`.
It lives apart from `app` so that the route modules do not import the app that imports them.
"""

from __future__ import annotations

from flask import Flask, current_app

from surveyctl.sandbox.store import Store

STORE_KEY = "surveyctl_store"


def install_store(app: Flask, store: Store) -> None:
    """Makes `store` the one `get_store()` answers inside `app`'s requests."""
    app.extensions[STORE_KEY] = store


def get_store() -> Store:
    """The store of the app serving the current request."""
    return current_app.extensions[STORE_KEY]
