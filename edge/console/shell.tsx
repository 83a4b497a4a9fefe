// The console's one document: a header, the sign-in form and the place each view is put. It holds no
// data and needs no key; the client script (client.ts) signs in and fetches the views.
import { raw } from 'hono/html'

export function Shell() {
  return (
    <>
      {raw('<!doctype html>')}
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <title>lhbox console</title>
          <link rel="icon" href="data:," />
          <link rel="stylesheet" href="/console/console.css" />
          <script src="/console/console.js" defer />
        </head>
        <body>
          <header>
            <a href="#/" class="brand">
              lhbox <span>ingest sinks</span>
            </a>
            <nav id="nav" hidden>
              <a href="#/">Overview</a>
              <a href="#/usage">Usage</a>
              <span id="who" />
              <button type="button" id="sign-out">
                Sign out
              </button>
            </nav>
          </header>
          <main>
            <form id="sign-in" hidden>
              <h1>Sign in</h1>
              <p>
                Give an API key (<code>al_key_…</code>): a read key shows everything, a write key can also act. It stays in this tab only (sessionStorage) and
                is sent as Authorization, never in a URL.
              </p>
              <label>
                API key
                <input name="key" type="password" autocomplete="off" spellcheck={false} required />
              </label>
              <button type="submit">Sign in</button>
              <p id="sign-in-error" class="alert" role="alert" hidden />
            </form>
            <p id="error" class="alert" role="alert" hidden />
            <div id="view" aria-live="polite" />
          </main>
          <noscript>The console needs JavaScript: it signs in and fetches each view with your key.</noscript>
        </body>
      </html>
    </>
  )
}
