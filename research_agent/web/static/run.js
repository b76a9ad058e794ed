// research-agent workbench: follow a run's progress over server-sent events (through follow.js).
// The page works without this file (it reloads itself while the run goes on); with it, each
// event is added as it comes, the writer's text streams into its box, and a broken connection
// is said on the page, where Cancel waits until the server is back. Every string from the server
// is set as text, never as markup.
(function () {
  "use strict";
  var watch = document.getElementById("watch");
  if (!watch || watch.getAttribute("data-outcome") !== "running" || !window.EventSource || !window.followEvents) {
    return;
  }
  var timeline = document.getElementById("timeline");
  var place = document.getElementById("place");
  var outcome = document.getElementById("outcome");
  var rate = document.querySelector("[data-count='rate']");
  var draft = document.getElementById("draft");
  var draftText = document.getElementById("draft-text");
  var draftStage = document.getElementById("draft-stage");
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

  function moved(data) {
    if (place && typeof data.place === "number") {
      place.value = data.place;
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
      if (data.stage === "plan review" && watch.getAttribute("data-review") === "none") {
        window.location.reload(); // the page as the server draws a run waiting for its plan: the review form
      }
    }
    timeline.appendChild(li);
    moved(data);
  }

  function counts(values) {
    window.followEvents.counts(watch, values);
    if (rate && values.streamed > 0 && values.streamed_ms > 0) {
      rate.textContent = values.streamed + " tokens, " +
        (values.streamed / (values.streamed_ms / 1000)).toFixed(1) + " tok/s";
    }
  }

  function text(data) {
    if (!draft) {
      return;
    }
    var bottom = draftText.scrollHeight - draftText.scrollTop - draftText.clientHeight < 24;
    if (data.new) {
      draftText.textContent = data.message;
    } else {
      draftText.appendChild(document.createTextNode(data.message));
    }
    draftStage.textContent = data.stage === "revise" ? "The revision, as it streams" : "The draft, as it streams";
    draft.hidden = draftText.textContent.length === 0;
    if (bottom) {
      draftText.scrollTop = draftText.scrollHeight;
    }
  }

  window.followEvents({
    watch: watch,
    last: "end",
    opened: function () {
      // every (re)connection replays the run from its start
      timeline.textContent = "";
      open = null;
    },
    on: {
      stage: add,
      note: add,
      stream: function (data) {
        if (rate) {
          rate.textContent = data.message.split(": ").slice(1).join(": ");
        }
        moved(data);
      },
      counts: function (data) {
        counts(data.counts || {});
      },
      text: text,
      end: function (data) {
        add(data);
        outcome.textContent = data.outcome;
        outcome.className = "status status-" + data.outcome;
        var cancel = document.getElementById("cancel");
        if (cancel) {
          cancel.remove();
        }
        // the page as the server draws a finished run: the report's link, the findings, the claims
        window.location.reload();
      }
    }
  });
})();
