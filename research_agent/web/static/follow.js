// research-agent workbench: follow a page's event stream, and say so when it breaks.
// window.followEvents(options) opens an EventSource on the data-events URL of options.watch (the
// page's watch section) and calls options.on[name](data) for each event of that name (its data
// parsed as JSON), and options.opened() on each (re)connection (the server replays the story from
// its start). While the stream is open, the page's #outcome says "running" and its Cancel button
// (#cancel button) can be pressed. A break says "connection lost" there, disables Cancel (nothing
// would receive it), shows "Connection lost" in #connection and asks the server whether it is there
// (a GET of this page): it reattaches when it answers, says so when it does not ("server gone") or
// no longer knows this page (404), and keeps asking, less and less often. After options.last (the
// event that ends the story) nothing is asked again.
// window.followEvents.counts(watch, values) sets each [data-count] cell of the watch section to its
// value. Every string is set as text, never as markup.
(function () {
  "use strict";
  var FIRST_WAIT = 1000;
  var LONGEST_WAIT = 30000;

  window.followEvents = function (options) {
    var banner = document.getElementById("connection");
    var outcome = document.getElementById("outcome");
    var source = null;
    var over = false;
    var wait = FIRST_WAIT;
    var quick = true; // the first look after the stream broke is at once; the next ones wait longer each time
    var timer = null;

    function say(text, gone) {
      banner.textContent = text;
      banner.className = gone ? "connection gone" : "connection";
      banner.hidden = !text;
    }

    function shown(state, text) {
      outcome.textContent = text;
      outcome.className = "status status-" + state;
      var button = document.querySelector("#cancel button");
      if (button) {
        button.disabled = state !== "running";
      }
    }

    function later(delay) {
      if (timer === null) {
        timer = window.setTimeout(ask, delay);
        if (delay > 0) {
          wait = Math.min(LONGEST_WAIT, wait * 2);
        }
      }
    }

    function connect() {
      source = new EventSource(options.watch.getAttribute("data-events"));
      source.addEventListener("open", function () {
        wait = FIRST_WAIT;
        quick = true;
        say("", false);
        shown("running", "running");
        if (options.opened) {
          options.opened();
        }
      });
      Object.keys(options.on).forEach(function (name) {
        source.addEventListener(name, function (event) {
          if (name === options.last) {
            over = true;
            source.close();
          }
          options.on[name](JSON.parse(event.data));
        });
      });
      source.addEventListener("error", broken);
    }

    function broken() {
      if (over) {
        return;
      }
      source.close();
      say("Connection lost: reattaching…", false);
      shown("lost", "connection lost");
      later(quick ? 0 : wait);
      quick = false;
    }

    function ask() {
      timer = null;
      window.fetch(window.location.href, {cache: "no-store", headers: {"Accept": "text/html"}})
        .then(function (answer) {
          if (answer.ok && answer.headers.get("X-Run-Page") === "journal") {
            over = true;  // the server restarted and shows this run from its journal: that page, not a stream
            say("The server was restarted: showing the run as its journal has it…", true);
            window.location.reload();
          } else if (answer.ok) {
            connect();
          } else if (answer.status === 404) {
            over = true;
            say("The server no longer knows this page (it was restarted): reload it to see what is there now.", true);
            shown("gone", "server gone");
          } else {
            say("Connection lost: the server answers " + answer.status + "; trying again…", false);
            later(wait);
          }
        })
        .catch(function () {
          say("Connection lost: the server is gone (it does not answer). Trying again every few seconds…", true);
          shown("gone", "server gone");
          later(wait);
        });
    }

    connect();
  };

  window.followEvents.counts = function (watch, values) {
    Object.keys(values).forEach(function (name) {
      var cell = watch.querySelector("[data-count='" + name.replace(/[^a-z_]/g, "") + "']");
      if (cell) {
        cell.textContent = String(values[name]);
      }
    });
  };
})();
