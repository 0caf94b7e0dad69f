// The dashboard's one script: the area filter (specs x sources) and the diff of two columns.
// Data comes from data/<page>.js (window.DASHBOARD), a script rather than a fetch so that the
// pages work from file:// too. Everything is written with textContent: messages are never HTML.
(function () {
  "use strict";
  var D = window.DASHBOARD;
  function $(id) { return document.getElementById(id); }
  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    if (attrs) { for (var k in attrs) { if (attrs.hasOwnProperty(k)) { node.setAttribute(k, attrs[k]); } } }
    if (text !== undefined && text !== null) { node.textContent = text; }
    return node;
  }
  if (!D) {
    var box = $("areas-section") || document.body;
    box.insertBefore(el("p", {"class": "verdict bad"}, "The page's data (data/*.js) did not load."), box.firstChild);
    return;
  }
  // a spec's area is its file's, as the page's data says (the build's area_of: one row per area)
  var areaOf = function (spec) { var file = spec.split("::")[0]; return (D.files || {})[file] || file; };
  var unexpected = D.columns.map(function (c) {
    var set = {}; c.unexpected.forEach(function (i) { set[i] = true; }); return set;
  });

  function cell(colIndex, specIndex) {
    var column = D.columns[colIndex];
    var code = column.cells.charAt(specIndex);
    var td = el("td", {"class": "o-" + code}, D.text[code] || code);
    var note = column.messages[specIndex];
    var tip = column.label + ": " + (D.text[code] || code) + (note !== undefined ? " - " + D.messages[note] : "");
    if (unexpected[colIndex][specIndex]) { td.className += " unexpected"; tip += " (unexpected)"; }
    td.title = tip;
    td.setAttribute("data-code", code);
    return td;
  }

  function shownColumns() {
    var kinds = $("kinds");
    var want = kinds ? kinds.value : "all";
    var out = [];
    D.columns.forEach(function (c, i) {
      if (want === "all" || c.kind === want || (want === "matrix" && c.origin === "matrix")) { out.push(i); }
    });
    return out;
  }

  function renderArea() {
    var area = $("area").value;
    var columns = shownColumns();
    var onlyChanging = $("changing").checked;
    var table = $("spec-table");
    table.textContent = "";
    var head = el("tr");
    head.appendChild(el("th", {"class": "spec"}, "spec (" + (area === "*" ? "all areas" : area) + ")"));
    columns.forEach(function (i) {
      var c = D.columns[i];
      var th = el("th", {"class": "vert", "title": c.label + " - " + c.verdict + (c.run ? " - run " + c.run : "")},
        c.day ? c.day : c.label);
      head.appendChild(th);
    });
    var thead = el("thead"); thead.appendChild(head); table.appendChild(thead);
    var tbody = el("tbody");
    var shown = 0, total = 0;
    D.specs.forEach(function (spec, s) {
      if (area !== "*" && areaOf(spec) !== area) { return; }
      total += 1;
      if (onlyChanging) {
        var seen = {};
        columns.forEach(function (i) { var code = D.columns[i].cells.charAt(s); if (code !== ".") { seen[code] = true; } });
        if (Object.keys(seen).length < 2) { return; }
      }
      shown += 1;
      // every spec has an address: #spec=<its id>, linkable from an upstream issue
      var tr = el("tr", {"id": "spec=" + spec});
      var th = el("th", {"class": "spec", "title": spec});
      th.appendChild(el("a", {"href": "#spec=" + spec}, spec));
      tr.appendChild(th);
      columns.forEach(function (i) { tr.appendChild(cell(i, s)); });
      tbody.appendChild(tr);
    });
    table.appendChild(tbody);
    $("area-count").textContent = shown + " of " + total + " specs shown, " + columns.length + " sources";
    // the newest columns are the last: show them first (the spec names stay, sticky on the left)
    var box = table.parentNode;
    if (box && box.className.indexOf("grid-scroll") >= 0) { box.scrollLeft = box.scrollWidth; }
  }

  // #spec=<id>: that spec's area selected, its row shown and outlined
  function followAddress() {
    var hash = decodeURIComponent(window.location.hash || "");
    if (hash.indexOf("#spec=") !== 0) { return; }
    var spec = hash.slice(6);
    if (D.specs.indexOf(spec) < 0) { return; }
    $("area").value = areaOf(spec);
    $("changing").checked = false;
    renderArea();
    var row = document.getElementById("spec=" + spec);
    if (row) { row.className += " target"; row.scrollIntoView({block: "center"}); }
  }

  function renderDiff() {
    var a = parseInt($("diff-a").value, 10), b = parseInt($("diff-b").value, 10);
    var table = $("diff-table");
    table.textContent = "";
    var head = el("tr");
    ["spec", "area", "A: " + D.columns[a].label, "B: " + D.columns[b].label].forEach(function (t) {
      head.appendChild(el("th", null, t));
    });
    var thead = el("thead"); thead.appendChild(head); table.appendChild(thead);
    var tbody = el("tbody");
    var differ = 0, both = 0;
    D.specs.forEach(function (spec, s) {
      var ca = D.columns[a].cells.charAt(s), cb = D.columns[b].cells.charAt(s);
      if (ca !== "." && cb !== ".") { both += 1; }
      if (ca === cb) { return; }
      differ += 1;
      var tr = el("tr", {"class": "diff-row"});
      tr.appendChild(el("th", {"class": "spec", "title": spec}, spec));
      tr.appendChild(el("td", null, areaOf(spec)));
      tr.appendChild(cell(a, s));
      tr.appendChild(cell(b, s));
      tbody.appendChild(tr);
    });
    table.appendChild(tbody);
    $("diff-count").textContent = differ === 0
      ? "no spec differs (" + both + " specs in both)"
      : differ + " spec(s) differ (" + both + " specs in both; a spec in one only counts as differing)";
  }

  function init() {
    var areaSelect = $("area");
    areaSelect.appendChild(el("option", {"value": "*"}, "all areas"));
    D.areas.forEach(function (pair) { areaSelect.appendChild(el("option", {"value": pair[0]}, pair[1] + " (" + pair[0] + ")")); });
    areaSelect.value = D.areas.length ? D.areas[0][0] : "*";
    ["area", "kinds", "changing"].forEach(function (id) { if ($(id)) { $(id).addEventListener("change", renderArea); } });
    ["diff-a", "diff-b"].forEach(function (id) {
      var select = $(id);
      D.columns.forEach(function (c, i) {
        select.appendChild(el("option", {"value": String(i)}, c.label + " (" + c.verdict + ")"));
      });
      select.addEventListener("change", renderDiff);
    });
    // default diff: the newest release against the newest nightly (else the first and last columns)
    var lastRelease = -1, lastNightly = -1;
    D.columns.forEach(function (c, i) { if (c.kind === "release") { lastRelease = i; } if (c.kind === "nightly") { lastNightly = i; } });
    $("diff-a").value = String(lastRelease >= 0 ? lastRelease : 0);
    $("diff-b").value = String(lastNightly >= 0 ? lastNightly : D.columns.length - 1);
    renderArea();
    renderDiff();
    followAddress();
    window.addEventListener("hashchange", followAddress);
    // a flip's button: its two sources in the diff
    var index = {};
    D.columns.forEach(function (c, i) { index[c.label] = i; });
    Array.prototype.forEach.call(document.querySelectorAll("button.show-diff"), function (button) {
      button.addEventListener("click", function () {
        var a = index[button.getAttribute("data-a")], b = index[button.getAttribute("data-b")];
        if (a === undefined || b === undefined) { return; }
        $("diff-a").value = String(a);
        $("diff-b").value = String(b);
        renderDiff();
        $("diff-section").scrollIntoView();
      });
    });
  }
  init();
}());
