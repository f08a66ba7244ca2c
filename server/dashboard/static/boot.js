// memhost dashboard: what a navigation gets when the server asks for a
// token (auth.go, BootPage). A browser adds no header of ours to a
// navigation, and the dashboard's key is never a cookie (cookies have no
// port: every server of the host would receive it); it is kept in this
// origin's storage, which only the dashboard's own scripts read. So this
// script takes the key — from the page when the address held the token,
// else from the storage —, asks for the same address with the key, and
// draws the answer in place of this page.
"use strict";

(async () => {
  const name = "memhost-dashboard-key";
  const msg = document.getElementById("boot-message");
  const given = document.querySelector('meta[name="memhost-dashboard-key"]');
  if (given) {
    localStorage.setItem(name, given.content);
    const u = new URL(location.href);
    u.searchParams.delete("token"); // out of the address and its history entry
    history.replaceState(history.state, "", u.pathname + u.search + u.hash);
  }
  const key = localStorage.getItem(name);
  if (!key) return; // the message says how to open the dashboard
  msg.textContent = "Opening the dashboard…";
  let r;
  try {
    r = await fetch(location.href, { headers: { "Memhost-Dashboard-Key": key, Accept: "text/html" } });
  } catch (e) {
    msg.textContent = "The server did not answer: " + e.message;
    return;
  }
  if (!(r.headers.get("Content-Type") || "").startsWith("text/html")) {
    let data = {};
    try { data = await r.json(); } catch (e) { /* not JSON */ }
    // A key of an earlier run of the server: forgotten, unless another
    // tab stored a new one meanwhile.
    if (r.status === 401 && localStorage.getItem(name) === key) localStorage.removeItem(name);
    msg.textContent = (data.error && data.error.message) || ("The server answered " + r.status);
    return;
  }
  const html = await r.text();
  document.open();
  document.write(html);
  document.close();
  if (location.hash) {
    const el = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (el) el.scrollIntoView();
  }
})();
