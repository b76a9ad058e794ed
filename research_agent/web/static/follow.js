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
    var timer = null;

    function say(text, gone) {
      banner.textContent = text;
      banner.className = gone ? "connection gone" : "connection";
      banner.hidden = !text;
    }

    function connect() {
      timer = null;
      source = new EventSource(options.url);
      source.addEventListener("open", function () {
        wait = FIRST_WAIT;
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
      if (timer === null) {
        timer = window.setTimeout(ask, 0);
      }
    }

    function again(text, gone) {
      say(text, gone);
      timer = window.setTimeout(ask, wait);
      wait = Math.min(LONGEST_WAIT, wait * 2);
    }

    function ask() {
      window.fetch(window.location.href, {cache: "no-store", headers: {"Accept": "text/html"}})
        .then(function (answer) {
          if (answer.ok) {
            say("Connection lost: reattaching…", false);
            connect();
          } else if (answer.status === 404) {
            over = true;
            say("The server no longer knows this page (it was restarted): reload it to see what is there now.", true);
            options.lost("gone");
          } else {
            again("Connection lost: the server answers " + answer.status + "; trying again…", false);
          }
        })
        .catch(function () {
          options.lost("gone");
          again("Connection lost: the server is gone (it does not answer). Trying again every few seconds…", true);
        });
    }

    connect();
  };
})();
