"""`brain desk`: a local web page for the person behind the vault.

Every page reads the vault through the same command functions the CLI calls (inbox, log, ledger,
doctor, find, recall) on every request, so the desk never disagrees with `brain` and shows changes
made elsewhere without a restart. Imported only by `brain desk`: Starlette, uvicorn and Jinja2
never load on another command's start.

- `actions`: what the forms do, as plain functions over a vault path (tested without a server);
- `pages`: what each page shows, as plain data;
- `server`: the Starlette app, its guard (token, Host, origin, CSRF) and the uvicorn loop;
- `door`: the owner-only file the browser is opened on, which leads it to the tokened URL.
"""
