// The book's full-text search (the page "Search the text"). book/render.py writes the text of
// every page into text_index.js (window.WORKBOOK_TEXT: title, url, text); this finds the pages
// that contain every word typed, most occurrences first, with the first word in context.
// Doxygen's own search box finds names and titles by their first letters only.
(function () {
  "use strict";
  var pages = window.WORKBOOK_TEXT || [];
  var box = document.getElementById("workbook-search");
  var out = document.getElementById("workbook-search-results");
  if (!box || !out) return;

  function escape(s) {
    return s.replace(/[&<>"]/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c];
    });
  }
  function occurrences(hay, word) {
    var n = 0;
    for (var i = hay.indexOf(word); i >= 0; i = hay.indexOf(word, i + word.length)) n++;
    return n;
  }
  function context(text, lower, word) {
    var i = lower.indexOf(word);
    var a = Math.max(0, i - 90), b = Math.min(text.length, i + word.length + 90);
    return (a > 0 ? "… " : "") + escape(text.slice(a, i)) + "<mark>" +
           escape(text.slice(i, i + word.length)) + "</mark>" +
           escape(text.slice(i + word.length, b)) + (b < text.length ? " …" : "");
  }
  function search(query) {
    var words = query.toLowerCase().split(/\s+/).filter(Boolean);
    if (!words.length) {
      out.innerHTML = "";
      return;
    }
    var hits = [];
    pages.forEach(function (page) {
      var lower = page.lower || (page.lower = page.text.toLowerCase());
      var score = 0;
      for (var k = 0; k < words.length; k++) {
        var n = occurrences(lower, words[k]);
        if (n === 0) return;
        score += n;
      }
      hits.push({ page: page, lower: lower, score: score });
    });
    hits.sort(function (x, y) { return y.score - x.score; });
    var said = hits.length + (hits.length === 1 ? " page contains " : " pages contain ") +
               words.map(escape).join(" and ");
    out.innerHTML = '<p class="workbook-search-count">' + said + "</p>" + hits.map(function (h) {
      return '<div class="workbook-search-hit"><a href="' + escape(h.page.url) + '">' +
             escape(h.page.title) + "</a><p>" + context(h.page.text, h.lower, words[0]) + "</p></div>";
    }).join("");
  }

  box.value = new URLSearchParams(window.location.search).get("q") || "";
  search(box.value);
  box.addEventListener("input", function () {
    search(box.value);
    try {
      window.history.replaceState(null, "", "?q=" + encodeURIComponent(box.value));
    } catch (e) {
      // some browsers refuse it for file:// pages; the search works without it
    }
  });
})();
