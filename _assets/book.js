/* The book's page helpers (issue 25), loaded on every page (html_js_files), offline, no library.
 *
 * - Checks: a page with check cells (folded, their result shown) gets one control before its first
 *   check: "Unfold all checks" / "Fold all checks".
 * - Tables: every body cell gets data-label, the text of its column's header, so that on a phone
 *   (book.css, max-width 600px) the rows of a list of records (errata, scorecard, claims: class
 *   loc-cards) stack into cards, each value under its column's name; other tables stay tables.
 * - Figures: every figure image (and explorer picture) fits the column; a tap (or Enter) opens it at
 *   its full size over the page, so that on a phone the whole figure is seen at once and its text can
 *   still be read at full size (issue 34).
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

  var RECORD_LISTS = "section#errata, section#the-paper-s-scorecard, section#how-sure-is-each-claim, " +
    "section#reproducibility";

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
      // Only a table that is a list of records (an erratum, a verdict, a claim: prose in every row)
      // stacks into cards on a phone; a numeric table stays a table and scrolls inside its box.
      if (table.closest(RECORD_LISTS)) table.classList.add("loc-cards");
    });
  }

  // Figures fit the column (book.css); one drawn wider than the screen shows its text smaller, so a
  // tap on any figure or explorer picture opens it at its full size over the page (scrollable, closed
  // by a tap, the close button or Escape).
  var viewer = null;

  function closeViewer() {
    if (!viewer) return;
    viewer.remove();
    viewer = null;
    document.documentElement.classList.remove("loc-viewing");
  }

  function openViewer(img) {
    closeViewer();
    viewer = document.createElement("div");
    viewer.className = "loc-viewer";
    viewer.setAttribute("role", "dialog");
    viewer.setAttribute("aria-label", "Figure at full size");
    var close = document.createElement("button");
    close.type = "button";
    close.className = "loc-viewer-close";
    close.textContent = "\u00d7 Close";
    var big = document.createElement("img");
    big.src = img.currentSrc || img.src;
    big.alt = img.alt;
    // the picture's own size in CSS pixels (a 2x figure declares it as its width attribute)
    var styled = /px$/.test(img.style.width) ? parseFloat(img.style.width) : 0;  // MyST-NB's 2x figures
    var width = parseFloat(img.getAttribute("width")) || styled || img.naturalWidth;
    if (width) big.style.width = width + "px";
    viewer.appendChild(close);
    viewer.appendChild(big);
    viewer.addEventListener("click", closeViewer);
    document.body.appendChild(viewer);
    document.documentElement.classList.add("loc-viewing");
    close.focus();
  }

  function figureViewer() {
    document.querySelectorAll(".bd-article figure img, .bd-article .loc-explorer img").forEach(function (img) {
      img.classList.add("loc-zoomable");
      img.setAttribute("tabindex", "0");
      img.setAttribute("title", "Open at full size");
      // Sphinx wraps a scaled figure in a link to its PNG: the viewer replaces that navigation
      img.addEventListener("click", function (e) { e.preventDefault(); openViewer(img); });
      img.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); openViewer(img); }
      });
    });
    document.addEventListener("keydown", function (e) { if (e.key === "Escape") closeViewer(); });
  }

  function ready() {
    checksControl();
    tableLabels();
    figureViewer();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", ready);
  else ready();
})();
