// agentform console: new rows of a list appear without a reload.
// A <tbody data-live="URL"> asks URL every few seconds for the rows created after
// its newest one (the server renders them; nothing here builds HTML from data).
"use strict";
(function () {
  var PERIOD_MS = 3000;
  function poll(body) {
    var url = body.getAttribute("data-live");
    var after = body.getAttribute("data-after") || "";
    var sep = url.indexOf("?") < 0 ? "?" : "&";
    fetch(url + sep + "after=" + encodeURIComponent(after), {
      credentials: "same-origin",
      headers: { "Accept": "text/html" }
    }).then(function (answer) {
      if (!answer.ok) { return null; }
      var newest = answer.headers.get("X-Console-Newest");
      return answer.text().then(function (html) { return { html: html, newest: newest }; });
    }).then(function (got) {
      if (!got || !got.newest) { return; }
      var holder = document.createElement("tbody");
      holder.innerHTML = got.html; // server-rendered, escaped rows of this console
      var empty = body.querySelector("tr.empty");
      if (empty) { empty.remove(); }
      while (holder.lastElementChild) {
        var row = holder.lastElementChild;
        row.classList.add("new");
        body.insertBefore(row, body.firstElementChild);
      }
      body.setAttribute("data-after", got.newest);
      var count = document.getElementById("live-status");
      if (count) { count.textContent = "New executions arrived; newest at " + got.newest + "."; }
    }).catch(function () { /* the next poll tries again */ });
  }
  function start() {
    var bodies = document.querySelectorAll("tbody[data-live]");
    Array.prototype.forEach.call(bodies, function (body) {
      window.setInterval(function () { poll(body); }, PERIOD_MS);
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
