/* The pages' live updates (a tournament's, a ladder's). The server sends the folder's progress
   (matches scheduled and finished, the state) on /api/events when it changes; when it differs
   from what this page shows (body's data-progress), the page fetches itself again and swaps in
   the parts that change (the ids in body's data-live-parts), keeping the filters as they are.
   The filters, if the page has any, submit themselves on change. */
(function () {
  "use strict";
  const live = document.getElementById("live");
  const parts = document.body.dataset.liveParts.split(" ");
  const filters = document.getElementById("filters");
  if (filters) {
    filters.addEventListener("change", () => {
      // Empty filters stay out of the address.
      for (const select of filters.querySelectorAll("select")) select.disabled = !select.value;
      filters.submit();
    });
  }
  if (!window.EventSource) return;
  let latest = document.body.dataset.progress;
  let busy = false;

  async function refresh() {
    busy = true;
    try {
      for (let tries = 0; tries < 3 && latest !== document.body.dataset.progress; tries++) {
        const answer = await fetch(location.href, { headers: { Accept: "text/html" } });
        const fresh = new DOMParser().parseFromString(await answer.text(), "text/html");
        for (const id of parts) {
          const now = document.getElementById(id);
          const next = fresh.getElementById(id);
          if (now && next) now.replaceWith(next);
        }
        document.body.dataset.progress = fresh.body.dataset.progress;
      }
      document.dispatchEvent(new Event("arena:parts")); // the bracket draws its lines again
    } catch (error) {
      live.dataset.live = "error";
    } finally {
      busy = false;
    }
  }

  let source = null;

  function follow() {
    source = new EventSource("/api/events");
    source.addEventListener("progress", (event) => {
      live.dataset.live = "on";
      latest = event.data;
      if (!busy && latest !== document.body.dataset.progress) refresh();
    });
    source.onerror = () => {
      const closed = source.readyState === EventSource.CLOSED;
      live.dataset.live = closed ? "off" : "reconnecting";
      live.title = closed
        ? "live updates off (too many pages follow it, or the server is gone): reload to retry"
        : "reconnecting";
    };
  }

  // A page left for another (a filter chosen) closes its stream at once: the browser would
  // keep it open for a page it might come back to, and its few connections to the server would
  // run out after a handful of filters.
  window.addEventListener("pagehide", () => {
    if (source) source.close();
    source = null;
    live.dataset.live = "off";
  });
  window.addEventListener("pageshow", (event) => {
    if (event.persisted || !source) follow();
  });
  follow();
})();
