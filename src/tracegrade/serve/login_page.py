"""The token login page both local servers show (`tracegrade monitor`, `tracegrade view`).

    >>> "Wrong token." in login_page("monitor", "TRACEGRADE_MONITOR_TOKEN", "Wrong token.")
    True

A start-up link ``/login#token=...`` fills the form from the fragment, which
never reaches the server or its logs, and removes it from the history.
"""

from __future__ import annotations

from html import escape


def login_page(server: str, env_var: str, message: str = "") -> str:
    """The page of ``tracegrade SERVER``; ``message`` (escaped) says why it is shown again."""
    note = f"<p class=bad>{escape(message)}</p>" if message else ""
    return f"""<!doctype html><html lang="en"><head><meta charset=utf-8><title>tracegrade {server}: log in</title>
</head><body style="font-family: sans-serif; margin: 3em"><h1>tracegrade {server}</h1>{note}
<form method=post action=/login><label>Token <input type=password name=token autocomplete=off autofocus></label>
<button type=submit>Log in</button></form>
<p>The token is {env_var}, or the one <code>tracegrade {server}</code> printed when it started.</p>
<script>
function fromFragment() {{
  if (!location.hash.startsWith('#token=')) return;
  const form = document.forms[0];
  form.token.value = decodeURIComponent(location.hash.slice(7));
  history.replaceState(null, '', '/login');
  form.submit();
}}
fromFragment();
window.addEventListener('hashchange', fromFragment);
</script></body></html>"""
