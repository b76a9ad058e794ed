// research-agent workbench: follow a page's event stream, and say so when it breaks.
// window.followEvents(options) opens an EventSource on options.url and calls options.on[name](data)
// for each event of that name (its data parsed as JSON); options.opened() on each (re)connection
// (the server replays the story from its start), options.lost(state) when the stream breaks.
// A break shows "Connection lost" in options.banner and asks the server whether it is there (a GET
// of this page): it reattaches when it answers, says so when it does not (the server is gone) or
// no longer knows this page (404), and keeps asking, less and less often. After options.last (the
// event that ends the story) nothing is asked again. Every string is set as text, never as markup.
(function () {
  "use strict";
  var FIRST_WAIT = 1000;
  var LONGEST_WAIT = 30000;

  window.followEvents = function (options) {
    var banner = options.banner;
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

    function later(delay) {
      if (timer === null) {
        timer = window.setTimeout(ask, delay);
        if (delay > 0) {
          wait = Math.min(LONGEST_WAIT, wait * 2);
        }
      }
    }

    function connect() {
      source = new EventSource(options.url);
      source.addEventListener("open", function () {
        wait = FIRST_WAIT;
        quick = true;
        say("", false);
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
      options.lost("lost");
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
            options.lost("gone");
          } else {
            say("Connection lost: the server answers " + answer.status + "; trying again…", false);
            later(wait);
          }
        })
        .catch(function () {
          say("Connection lost: the server is gone (it does not answer). Trying again every few seconds…", true);
          options.lost("gone");
          later(wait);
        });
    }

    connect();
  };
})();
