// research-agent workbench: follow a run's progress over server-sent events.
// The page works without this file (it reloads itself while the run goes on); with it, each
// event is added as it comes. Every string from the server is set as text, never as markup.
(function () {
  "use strict";
  var watch = document.getElementById("watch");
  if (!watch || watch.getAttribute("data-outcome") !== "running" || !window.EventSource) {
    return;
  }
  var timeline = document.getElementById("timeline");
  var place = document.getElementById("place");
  var outcome = document.getElementById("outcome");
  var rate = document.querySelector("[data-count='rate']");
  var open = null; // the stage in progress: {li, at}

  function closeStage(at) {
    if (open) {
      var took = document.createElement("span");
      took.className = "took";
      took.textContent = " " + Math.max(0, at - open.at).toFixed(1) + " s";
      open.li.appendChild(took);
      open = null;
    }
  }

  function add(data) {
    var li = document.createElement("li");
    li.className = "event event-" + data.kind;
    var msg = document.createElement("span");
    msg.className = "msg";
    msg.textContent = data.message;
    li.appendChild(msg);
    if (data.kind === "stage" || data.kind === "end") {
      closeStage(data.at);
    }
    if (data.kind === "stage") {
      open = {li: li, at: data.at};
    }
    if (data.kind === "stream" && rate) {
      rate.textContent = data.message.split(": ").slice(1).join(": ");
    }
    timeline.appendChild(li);
    if (place && typeof data.place === "number") {
      place.value = data.place;
    }
  }

  function counts(values) {
    Object.keys(values).forEach(function (name) {
      var cell = watch.querySelector("[data-count='" + name.replace(/[^a-z_]/g, "") + "']");
      if (cell) {
        cell.textContent = String(values[name]);
      }
    });
    if (rate && values.streamed > 0 && values.streamed_ms > 0) {
      rate.textContent = values.streamed + " tokens, " +
        (values.streamed / (values.streamed_ms / 1000)).toFixed(1) + " tok/s";
    }
  }

  var source = new EventSource(watch.getAttribute("data-events"));
  source.addEventListener("open", function () {
    // every (re)connection replays the run from its start
    timeline.textContent = "";
    open = null;
  });
  ["stage", "note", "stream"].forEach(function (kind) {
    source.addEventListener(kind, function (event) {
      add(JSON.parse(event.data));
    });
  });
  source.addEventListener("counts", function (event) {
    counts(JSON.parse(event.data).counts || {});
  });
  source.addEventListener("end", function (event) {
    source.close();
    var data = JSON.parse(event.data);
    add(data);
    outcome.textContent = data.outcome;
    outcome.className = "status status-" + data.outcome;
    var cancel = document.getElementById("cancel");
    if (cancel) {
      cancel.remove();
    }
    // the page as the server draws a finished run: the report's link, the findings, the claims
    window.location.reload();
  });
})();
