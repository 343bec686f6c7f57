/* The book's page helpers (issue 25), loaded on every page (html_js_files), offline, no library.
 *
 * - Checks: a page with check cells (folded, their result shown) gets one control before its first
 *   check: "Unfold all checks" / "Fold all checks".
 * - Tables: every body cell gets data-label, the text of its column's header, so that on a phone
 *   (book.css, max-width 600px) the rows stack into cards, each value under its column's name.
 * - Figures: every figure image (and explorer picture) sits in its own frame; where the screen is
 *   narrower than the figure's natural size the frame scrolls sideways (with a cue) instead of
 *   shrinking the figure, so that figure text stays as large as the caption and the page never
 *   scrolls sideways.
 */
(function () {
  "use strict";

  function checksControl() {
    var details = document.querySelectorAll(".bd-article div.cell.tag_check > details.hide");
    if (!details.length) return;
    var first = details[0].closest("div.cell");
    var bar = document.createElement("div");
    bar.className = "loc-checks-toggle";
    var note = document.createElement("span");
    note.textContent = details.length + (details.length === 1 ? " check" : " checks") +
      " on this page: code folded, results shown.";
    var button = document.createElement("button");
    button.type = "button";
    function allOpen() {
      return Array.prototype.every.call(details, function (d) { return d.open; });
    }
    function label() {
      var open = allOpen();
      button.textContent = open ? "Fold all checks" : "Unfold all checks";
      button.setAttribute("aria-expanded", open ? "true" : "false");
    }
    button.addEventListener("click", function () {
      var open = !allOpen();
      Array.prototype.forEach.call(details, function (d) { d.open = open; });
      label();
    });
    Array.prototype.forEach.call(details, function (d) { d.addEventListener("toggle", label); });
    label();
    bar.appendChild(note);
    bar.appendChild(button);
    first.parentNode.insertBefore(bar, first);
  }

  function tableLabels() {
    document.querySelectorAll(".bd-article table").forEach(function (table) {
      var head = table.querySelector("thead tr");
      if (!head) return;
      var names = Array.prototype.map.call(head.children, function (th) {
        return th.textContent.replace(/\s+/g, " ").trim();
      });
      table.querySelectorAll("tbody tr").forEach(function (row) {
        var column = 0;
        Array.prototype.forEach.call(row.children, function (cell) {
          if (names[column]) cell.setAttribute("data-label", names[column]);
          column += cell.colSpan || 1;
        });
      });
      table.classList.add("loc-labelled");
    });
  }

  var frames = [];

  function figureFrames() {
    document.querySelectorAll(".bd-article figure img, .bd-article .loc-explorer img").forEach(function (img) {
      if (img.parentNode.classList.contains("loc-figure-frame")) return;
      var frame = document.createElement("div");
      frame.className = "loc-figure-frame";
      img.parentNode.insertBefore(frame, img);
      frame.appendChild(img);
      var cue = document.createElement("p");
      cue.className = "loc-figure-cue";
      cue.textContent = "\u21c6 The figure is wider than the screen: scroll it sideways (or turn the phone).";
      frame.parentNode.insertBefore(cue, frame.nextSibling);
      frames.push(frame);
      img.addEventListener("load", markScrolling);
    });
    markScrolling();
  }

  function markScrolling() {
    frames.forEach(function (frame) {
      frame.classList.toggle("loc-scrolls", frame.scrollWidth > frame.clientWidth + 1);
    });
  }

  function ready() {
    checksControl();
    tableLabels();
    figureFrames();
    window.addEventListener("resize", markScrolling);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", ready);
  else ready();
})();
