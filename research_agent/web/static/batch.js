// research-agent workbench: follow a batch over server-sent events (through follow.js). Without
// this file the page reloads itself while the batch runs; with it, each question's state and
// stage change in place, the counts and the bar follow, and a broken connection is said on the
// page. Every string from the server is set as text, never as markup.
(function () {
  "use strict";
  var watch = document.getElementById("watch");
  if (!watch || !watch.getAttribute("data-events") || !window.EventSource || !window.followEvents) {
    return;
  }
  var place = document.getElementById("place");

  function counts(values) {
    window.followEvents.counts(watch, values);
    if (place && typeof values.questions === "number") {
      place.max = Math.max(1, values.questions);
      place.value = (values.done || 0) + (values.failed || 0);
    }
  }

  function cell(line, name) {
    var row = document.getElementById("q-" + String(line));
    return row ? row.querySelector("[data-cell='" + name + "']") : null;
  }

  function stage(line, text, error) {
    var now = cell(line, "stage");
    if (!now) {
      return;
    }
    now.textContent = text || "";
    if (error) {
      var why = document.createElement("span");
      why.className = "error";
      why.textContent = error;
      now.appendChild(why);
    }
  }

  function row(data) {
    var state = cell(data.line, "state");
    if (state) {
      state.textContent = data.state;
      state.className = "status status-" + String(data.state).replace(/[^a-z]/g, "");
    }
    stage(data.line, data.stage, data.error);
    var report = cell(data.line, "report");
    if (report) {
      report.textContent = "";
      if (data.report && data.report.indexOf("/reports/") === 0) {
        var link = document.createElement("a");
        link.setAttribute("href", data.report);
        link.textContent = "report";
        report.appendChild(link);
      }
    }
  }

  window.followEvents({
    watch: watch,
    last: "end",
    on: {
      state: function (data) {
        counts(data.counts || {});
        (data.rows || []).forEach(row);
      },
      question: function (data) {
        row(data.row || {});
        counts(data.counts || {});
      },
      stage: function (data) {
        stage(data.line, data.stage, "");
      },
      end: function () {
        // the page as the server draws a batch that has stopped: its state, Resume when questions are left
        window.location.reload();
      }
    }
  });
})();
