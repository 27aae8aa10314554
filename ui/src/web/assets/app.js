// Live updates for Tether's answering page. The page answers without this
// script; it only keeps the queue current (server-sent events) and counts
// the time left down. It reloads the page when the queue changes, unless a
// reason is being typed.
(function () {
  "use strict";
  var loaded = Date.now();
  function typing() {
    var areas = document.querySelectorAll("textarea");
    for (var i = 0; i < areas.length; i++) {
      if (areas[i].value.length > 0 || document.activeElement === areas[i]) { return true; }
    }
    return false;
  }
  function tick() {
    var spans = document.querySelectorAll("[data-left-ms]");
    for (var i = 0; i < spans.length; i++) {
      var left = Math.max(0, Number(spans[i].getAttribute("data-left-ms")) - (Date.now() - loaded));
      var secs = Math.floor(left / 1000);
      spans[i].textContent = Math.floor(secs / 60) + ":" + ("0" + (secs % 60)).slice(-2) + " left";
      spans[i].className = secs < 15 ? "left urgent" : "left";
    }
  }
  setInterval(tick, 1000);
  if (!window.EventSource) { return; }
  var shown = document.body.getAttribute("data-version");
  var pending = false;
  // A form on its way: its answer's page comes next, not a reload.
  var submitting = false;
  document.addEventListener("submit", function () { submitting = true; });
  var source = new EventSource("/events");
  source.addEventListener("queue", function (event) {
    if (event.data === shown) { return; }
    pending = true;
    if (!typing() && !submitting) { location.replace("/"); }
  });
  source.addEventListener("revoked", function () {
    source.close();
    location.replace("/");
  });
  document.addEventListener("focusout", function () {
    if (pending && !typing() && !submitting) { location.replace("/"); }
  });
})();
